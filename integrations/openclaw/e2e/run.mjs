#!/usr/bin/env node
// The knowhub plugin in the real OpenClaw: a real `knowhub up` on the
// fixture docs, OpenClaw loading the plugin from this checkout, and a
// scripted OpenAI-compatible model (in this process) driving the real agent
// loop through every tool. Prints "N passed, M failed".
//
// Env: OPENCLAW_BIN, KNOWHUB_BIN (Node 24 first on PATH). Standard library only.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const openclaw = process.env.OPENCLAW_BIN;
const knowhub = process.env.KNOWHUB_BIN;
if (!openclaw || !knowhub) { console.error("set OPENCLAW_BIN and KNOWHUB_BIN"); process.exit(2); }

let passed = 0, failed = 0;
const check = (name, ok, info = "") => {
  if (ok) { passed++; console.log(`ok   ${name}`); } else { failed++; console.log(`FAIL ${name}${info ? `\n     ${String(info).slice(0, 1500)}` : ""}`); }
};

function run(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "", stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => p.kill("SIGTERM"), opts.timeoutMs ?? 180_000);
    p.on("close", (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

// Ports: any free one, or the next free one from E2E_PORT_BASE upwards.
let nextPort = Number(process.env.E2E_PORT_BASE || 0);
const freePort = () => new Promise((resolve, reject) => {
  const s = createServer();
  s.once("error", (e) => { if (!nextPort) return reject(e); nextPort++; freePort().then(resolve, reject); });
  s.listen(nextPort, "127.0.0.1", () => { const p = s.address().port; if (nextPort) nextPort++; s.close(() => resolve(p)); });
});
async function until(what, fn, ms = 30_000) {
  const end = Date.now() + ms;
  for (;;) {
    try { const v = await fn(); if (v) return v; } catch { /* retry */ }
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const tmp = mkdtempSync(join(tmpdir(), "knowhub-openclaw-e2e-"));
const httpPort = await freePort();
const natsPort = await freePort();
const api = `http://127.0.0.1:${httpPort}`;
const kh = spawn(knowhub, ["up", join(here, "fixtures/docs"), "--data", join(tmp, "kh"), "--http", `127.0.0.1:${httpPort}`, "--nats-listen", `127.0.0.1:${natsPort}`], { stdio: ["ignore", "ignore", "pipe"] });
let khLog = ""; kh.stderr.on("data", (d) => (khLog += d));
const cleanup = () => { try { kh.kill("SIGTERM"); } catch {} };
process.on("exit", cleanup);
await until("knowhub indexed the fixture", async () => {
  const r = await fetch(`${api}/api/docs/search?q=heartbeat+interval`);
  return r.ok && (await r.json()).hits?.length > 0;
});
await fetch(`${api}/api/tools`, { method: "POST", body: JSON.stringify({ tools: [{ name: "github__create_issue", description: "Create an issue in a GitHub repository", type: "sourced", instance: "github" }] }) });

// The scripted model: one tool call per step, chosen by how many tool
// results the conversation holds, then a final answer.
const requests = [];
let script = [];
const model = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    const j = JSON.parse(body || "{}");
    requests.push(j);
    const results = (j.messages ?? []).filter((m) => m.role === "tool");
    const step = script[results.length];
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta, finish = null) => res.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "fake", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    if (step) {
      const args = typeof step.args === "function" ? step.args(results) : step.args;
      chunk({ role: "assistant", tool_calls: [{ index: 0, id: `call_${results.length}`, type: "function", function: { name: step.tool, arguments: JSON.stringify(args) } }] });
      chunk({}, "tool_calls");
    } else {
      chunk({ role: "assistant", content: "done" });
      chunk({}, "stop");
    }
    res.write("data: [DONE]\n\n");
    res.end();
  });
});
const modelListen = await freePort();
await new Promise((r) => model.listen(modelListen, "127.0.0.1", r));
const modelPort = model.address().port;

const home = join(tmp, "oc");
const cfgPath = join(tmp, "openclaw.json");
writeFileSync(cfgPath, JSON.stringify({
  models: { providers: { fake: { api: "openai-completions", baseUrl: `http://127.0.0.1:${modelPort}/v1`, apiKey: "x", models: [{ id: "m", name: "m", input: ["text"], contextWindow: 32000, maxTokens: 1000, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }] } } },
  agents: { defaults: { model: { primary: "fake/m" } } },
  tools: { toolSearch: false },
  plugins: { load: { paths: [join(here, "..")] }, allow: ["knowhub"], entries: { knowhub: { enabled: true, hooks: { allowConversationAccess: true }, config: { apiUrl: api, reminderMode: "aggressive", enableServerExtraction: true, privacyMode: "strict" } } } },
}));
const env = { ...process.env, OPENCLAW_HOME: home, OPENCLAW_CONFIG_PATH: cfgPath, OPENCLAW_OFFLINE: "1" };
const oc = (args, o = {}) => run(openclaw, args, { env, ...o });
const toolText = (req, i) => { const m = (req.messages ?? []).filter((x) => x.role === "tool")[i]; return typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? ""); };
const systemText = (req) => (req.messages ?? []).filter((m) => m.role === "system" || m.role === "developer").map((m) => typeof m.content === "string" ? m.content : JSON.stringify(m.content)).join("\n");

// 1. Every tool in one real agent run.
script = [
  { tool: "semantic_doc_search", args: { query: "heartbeat interval", topK: 3 } },
  { tool: "kb_save", args: { task: "configure the gateway heartbeat", content: "Set gateway.heartbeat.intervalMs to 15000 for flaky links; values under 5000 are rejected.", types: ["tool"], score: 4 } },
  { tool: "kb_search", args: { query: "gateway heartbeat flaky links" } },
  { tool: "kb_update", args: (r) => ({ knowledge_id: (toolText({ messages: r }, 1).match(/Saved as ([0-9a-f]+)/) ?? [])[1] ?? "missing", is_helpful: true }) },
  { tool: "kh_tool_search", args: { query: "create an issue" } },
];
const a = await oc(["agent", "--local", "--agent", "main", "--session-id", "e2e-1", "--json", "-m", "Remember that the staging database is read-only on Fridays. How do I set the heartbeat interval?"]);
check("agent run exits 0", a.code === 0, a.stderr.slice(-1500));
const last = requests[requests.length - 1] ?? {};
check("semantic_doc_search: a docs hit by path", /gateway-heartbeat\.md > Gateway heartbeat > Heartbeat interval/.test(toolText(last, 0)), toolText(last, 0));
check("semantic_doc_search: the section text", /value below 5000 is rejected/.test(toolText(last, 0)), toolText(last, 0));
check("kb_save: an id", /Saved as [0-9a-f]+/.test(toolText(last, 1)), toolText(last, 1));
check("kb_search: finds the save", /intervalMs to 15000/.test(toolText(last, 2)), toolText(last, 2));
check("kb_update: recorded", /Recorded: entry [0-9a-f]+ was helpful/.test(toolText(last, 3)), toolText(last, 3));
check("kh_tool_search: a tool hit", /github__create_issue/.test(toolText(last, 4)), toolText(last, 4));
check("reminder: the introduction reaches the model", requests.length > 0 && systemText(requests[0]).includes("knowhub tools are available"), systemText(requests[0]).slice(0, 500));

// 2. The transcript upload produced a knowledge entry search finds.
const found = await until("extracted entry searchable", async () => {
  const r = await (await fetch(`${api}/api/knowledge/search?q=staging+database+read-only+fridays`)).json();
  return r.results?.some((e) => /read-only on Fridays/i.test(e.content)) ? r : null;
}, 20_000).catch((e) => e);
check("transcript upload: extracted entry found by search", !(found instanceof Error), found?.message);

// 3. CLI and inspect.
const ds = await oc(["docsearch", "search", "fallback model chain", "-k", "2"]);
check("openclaw docsearch search", ds.code === 0 && /models\.md > Models > Fallback model chain/.test(ds.stdout), ds.stdout + ds.stderr.slice(-800));
const st = await oc(["knowhub", "status"]);
check("openclaw knowhub status", st.code === 0 && /reachable at/.test(st.stdout) && /allowConversationAccess true/.test(st.stdout), st.stdout + st.stderr.slice(-800));
const ins = await oc(["plugins", "inspect", "knowhub", "--runtime", "--json"]);
let insJ = {}; try { insJ = JSON.parse(ins.stdout.slice(ins.stdout.indexOf("{"))); } catch {}
check("plugins inspect: no diagnostics, every tool", Array.isArray(insJ.diagnostics) && insJ.diagnostics.length === 0 && ["semantic_doc_search", "kb_search", "kb_save", "kb_update", "kh_tool_search"].every((t) => JSON.stringify(insJ.tools).includes(t)), JSON.stringify(insJ.diagnostics ?? ins.stdout.slice(-800)));

// 4. knowhub stopped: the tool answers the clear error, the run completes.
kh.kill("SIGTERM");
await until("knowhub stopped", async () => { try { await fetch(`${api}/healthz`); return false; } catch { return true; } });
requests.length = 0;
script = [{ tool: "semantic_doc_search", args: { query: "heartbeat" } }];
const down = await oc(["agent", "--local", "--agent", "main", "--session-id", "e2e-2", "--json", "-m", "heartbeat?"]);
const dl = requests[requests.length - 1] ?? {};
check("knowhub down: run completes", down.code === 0, down.stderr.slice(-800));
check("knowhub down: the clear error", toolText(dl, 0).includes(`knowhub is not reachable at ${api}`), toolText(dl, 0));

model.close();
rmSync(tmp, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
