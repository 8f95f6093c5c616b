#!/usr/bin/env node
// The knowhub plugin in the real OpenClaw: a real `knowhub up` on the
// fixture docs, OpenClaw loading the plugin from this checkout, and a
// scripted OpenAI-compatible model (in this process) driving the real agent
// loop through every tool; then a gateway whose plugin runs knowhub itself
// (managed mode), answering /docsearch through chat.send and the docsearch
// commands. Prints "N passed, M failed".
//
// Env: OPENCLAW_BIN, KNOWHUB_BIN (Node 24 first on PATH). Standard library only.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { INTRO, REMINDER } from "../lib.js";

const TOOL_NAMES = ["semantic_doc_search", "kb_search", "kb_save", "kb_update", "kh_tool_search"];

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
    children.add(p);
    let stdout = "", stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => p.kill("SIGTERM"), opts.timeoutMs ?? 180_000);
    p.on("close", (code) => { children.delete(p); clearTimeout(timer); resolve({ code, stdout, stderr }); });
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
const khArgs = ["up", join(here, "fixtures/docs"), "--data", join(tmp, "kh"), "--http", `127.0.0.1:${httpPort}`, "--nats-listen", `127.0.0.1:${natsPort}`];
let kh = spawn(knowhub, khArgs, { stdio: ["ignore", "ignore", "pipe"] });
let khLog = ""; kh.stderr.on("data", (d) => (khLog += d));
// Whatever is still running when this process exits, for any reason.
const children = new Set([kh]);
let leftovers = () => []; // the managed knowhub's pids, once it has a port
const cleanup = () => {
  for (const c of children) { try { c.kill("SIGKILL"); } catch {} }
  for (const pid of leftovers()) { try { process.kill(pid, "SIGKILL"); } catch {} }
};
process.on("SIGINT", () => process.exit(130));
process.on("SIGTERM", () => process.exit(143));
process.on("exit", cleanup);
await until("knowhub indexed the fixture", async () => {
  const r = await fetch(`${api}/api/docs/search?q=heartbeat+interval`);
  return r.ok && (await r.json()).hits?.length > 0;
});
await fetch(`${api}/api/tools`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ tools: [{ name: "github__create_issue", description: "Create an issue in a GitHub repository", type: "sourced", instance: "github" }] }) });

// thisTurn is the part of a model request after the user's last message
// (OpenClaw adds user-role messages of its own context between tool results).
const thisTurn = (msgs = []) => {
  const own = (m) => m.role === "user" && JSON.stringify(m.content).includes("BEGIN_OPENCLAW_INTERNAL_CONTEXT");
  let i = msgs.length - 1;
  while (i >= 0 && !(msgs[i].role === "user" && !own(msgs[i]))) i--;
  return msgs.slice(i + 1);
};

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
    const results = thisTurn(j.messages).filter((m) => m.role === "tool");
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
const toolText = (req, i) => { const m = thisTurn(req.messages).filter((x) => x.role === "tool")[i]; return typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? ""); };
// toolPlain is a tool result's text as the model reads it.
const toolPlain = (req, i) => { const m = thisTurn(req.messages).filter((x) => x.role === "tool")[i]; const c = m?.content ?? ""; return typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => p.text ?? "").join("\n") : JSON.stringify(c); };
const systemText = (req) => (req.messages ?? []).filter((m) => m.role === "system" || m.role === "developer").map((m) => typeof m.content === "string" ? m.content : JSON.stringify(m.content)).join("\n");

const mHttp = await freePort(), mNats = await freePort();
const mApi = `http://127.0.0.1:${mHttp}`;
if (process.env.E2E_PORT_BASE) nextPort = Number(process.env.E2E_PORT_BASE) + 500; // the gateway uses ports above its own
const gwPort = await freePort();
const gwToken = "e2e-gateway-token";
// Its own directory: OpenClaw installs plugins next to the config file.
mkdirSync(join(tmp, "gw"));
const gwCfgPath = join(tmp, "gw", "openclaw.json");
writeFileSync(gwCfgPath, JSON.stringify({
  models: JSON.parse(readFileSync(cfgPath, "utf8")).models,
  agents: { defaults: { model: { primary: "fake/m" } } },
  tools: { toolSearch: false },
  logging: { file: join(tmp, "gateway.log") },
  plugins: { allow: ["knowhub"], entries: { knowhub: { enabled: true, hooks: { allowConversationAccess: true }, config: {
    apiUrl: mApi, reminderMode: "normal", knowhubBin: knowhub, httpListen: `127.0.0.1:${mHttp}`, natsListen: `127.0.0.1:${mNats}`, dataDir: join(tmp, "managed"),
    repositories: [{ name: "fixture", path: join(here, "fixtures/docs"), priority: 1 }],
  } } } },
}));
const gwEnv = { ...process.env, OPENCLAW_HOME: join(tmp, "gw"), OPENCLAW_CONFIG_PATH: gwCfgPath, OPENCLAW_OFFLINE: "1" };
const gwc = (args) => run(openclaw, args, { env: gwEnv });
const call = (method, params) => gwc(["gateway", "call", method, "--url", `ws://127.0.0.1:${gwPort}`, "--token", gwToken, "--json", "--params", JSON.stringify(params)]);
const strip = (t) => t.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
// managedPids lists the knowhub processes serving the managed HTTP port.
const managedPids = () => readdirSync("/proc").filter((d) => /^\d+$/.test(d)).filter((d) => {
  try { const a = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0"); return a[0] === knowhub && a.includes(`127.0.0.1:${mHttp}`); } catch { return false; }
}).map(Number);
leftovers = managedPids;
const alive = (pid) => { try { process.kill(pid, 0); return !readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z"); } catch { return false; } };

// The gateway starts while the checks above run. It gets the plugin as the
// README installs it, not from the checkout's path.
let gw = null, gwLog = "", gwExit = null, t5 = 0;
const gwStarted = gwc(["plugins", "install", "--force", "--accept-capabilities", join(here, "..")]).then((inst) => {
  gw = spawn(openclaw, ["gateway", "run", "--port", String(gwPort), "--bind", "loopback", "--auth", "token", "--token", gwToken, "--allow-unconfigured"], { env: gwEnv, stdio: ["ignore", "pipe", "pipe"] });
  children.add(gw);
  gwExit = new Promise((r) => gw.on("exit", (code, sig) => { children.delete(gw); r({ code, sig }); }));
  gw.stdout.on("data", (d) => (gwLog += d));
  gw.stderr.on("data", (d) => (gwLog += d));
  t5 = Date.now();
  return inst;
});

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
{
  // The section as written: a fenced block with its language, inline code,
  // a link and a table, lines kept.
  const md = readFileSync(join(here, "fixtures/docs/gateway-heartbeat.md"), "utf8").split("## Heartbeat interval\n")[1].trim();
  const got = toolPlain(last, 0);
  check("semantic_doc_search: the section's Markdown intact (```bash fence, inline code, link, table)", got.includes(md) && got.includes("```bash\nopenclaw config set") && got.includes("| --- | --- | --- |"), got);
}
check("kb_save: an id", /Saved as [0-9a-f]+/.test(toolText(last, 1)), toolText(last, 1));
{
  const id = (toolText(last, 1).match(/Saved as ([0-9a-f]+)/) ?? [])[1];
  const e = id ? await (await fetch(`${api}/api/knowledge/${id}`)).json().catch(() => ({})) : {};
  check("kb_save: scope org:openclaw, owner agent:main (the KnowHub design's contract)", JSON.stringify(e.scopes) === '["org:openclaw"]' && e.owner === "agent:main", JSON.stringify(e).slice(0, 500));
}
check("kb_search: finds the save", /intervalMs to 15000/.test(toolText(last, 2)), toolText(last, 2));
check("kb_update: recorded", /Recorded: entry [0-9a-f]+ was helpful/.test(toolText(last, 3)), toolText(last, 3));
check("kh_tool_search: a tool hit", /github__create_issue/.test(toolText(last, 4)), toolText(last, 4));
check("reminder: the introduction reaches the model", requests.length > 0 && systemText(requests[0]).includes(INTRO), systemText(requests[0]).slice(0, 500));
// reminderMode aggressive (every 2 model calls): model requests 2, 4, 6 of
// a run carry the reminder, once, in the request itself (not in a tool
// result, not kept in the session: the next request has none); the system
// text is the same on every call.
const cadence = (reqs, every) => {
  const seen = reqs.map((r) => JSON.stringify(r.messages ?? []).split(REMINDER).length - 1);
  const want = reqs.map((_, i) => ((i + 1) % every === 0 ? 1 : 0));
  const sys = reqs.map(systemText);
  return { ok: reqs.length > every && JSON.stringify(seen) === JSON.stringify(want) && sys.every((t) => t === sys[0] && t.split(INTRO).length === 2), info: `reminders seen per call ${JSON.stringify(seen)}, want ${JSON.stringify(want)}; system text sizes ${JSON.stringify(sys.map((t) => t.length))}` };
};
const c1 = cadence(requests, 2);
check("reminder: aggressive, every 2 model calls, system text constant", c1.ok, c1.info);
console.log(`     ${c1.info}`);

// 1b. An agent that calls only a core tool is reminded all the same
// (aggressive: requests 2 and 4 of 5).
{
  const names = (requests[0]?.tools ?? []).map((t) => t.function?.name ?? t.name);
  const core = ["session_status", "agents_list", "ls"].find((n) => names.includes(n)) ?? "session_status";
  requests.length = 0;
  script = [1, 2, 3, 4].map(() => ({ tool: core, args: core === "ls" ? { path: "." } : {} }));
  const r = await oc(["agent", "--local", "--agent", "main", "--session-id", "e2e-core", "--json", "-m", "What is the session status?"]);
  const knowhubCalls = requests.flatMap((q) => thisTurn(q.messages).filter((m) => m.role === "assistant")).flatMap((m) => m.tool_calls ?? []).filter((c) => TOOL_NAMES.includes(c.function?.name));
  const c = cadence(requests, 2);
  check(`reminder: aggressive, an agent calling only the core tool ${core} gets it in requests 2 and 4`, r.code === 0 && requests.length === 5 && knowhubCalls.length === 0 && c.ok,
    `${requests.length} model calls, ${knowhubCalls.length} knowhub tool calls; ${c.info}\n${r.stderr.slice(-800)}`);
  console.log(`     ${c.info}`);
}

// 2. The transcript upload produced a knowledge entry search finds.
const found = await until("extracted entry searchable", async () => {
  const r = await (await fetch(`${api}/api/knowledge/search?q=staging+database+read-only+fridays`)).json();
  return r.results?.some((e) => /read-only on Fridays/i.test(e.content)) ? r : null;
}, 20_000).catch((e) => e);
check("transcript upload: extracted entry found by search", !(found instanceof Error), found?.message);

// 3. CLI and inspect.
const ds = await oc(["docsearch", "search", "fallback model chain", "-k", "2"]);
check("openclaw docsearch search", ds.code === 0 && /models\.md > Models > Fallback model chain/.test(ds.stdout), ds.stdout + ds.stderr.slice(-800));
const dsq = await oc(["docsearch", "fallback", "model", "chain", "-k", "2"]);
check("openclaw docsearch <query>: the same answer as docsearch search", dsq.code === 0 && dsq.stdout === ds.stdout, dsq.stdout + dsq.stderr.slice(-800));
const dsj = await oc(["docsearch", "status", "--json"]);
let dsjJ = {}; try { dsjJ = JSON.parse(dsj.stdout); } catch {}
check("openclaw docsearch status --json: doc-engine's fields", dsj.code === 0 && dsjJ.totalFiles === 2 && dsjJ.totalChunks >= 2 && Object.values(dsjJ.repos ?? {})[0]?.files === 2 && typeof dsjJ.storageBytes === "number", dsj.stdout + dsj.stderr.slice(-800));
// doc-engine left in the config: said once, with what to do.
{
  const deCfg = join(tmp, "with-doc-engine.json");
  const c = JSON.parse(readFileSync(cfgPath, "utf8"));
  c.plugins.entries["doc-engine"] = { enabled: false, config: { repositories: [] } };
  writeFileSync(deCfg, JSON.stringify(c));
  const de = await run(openclaw, ["knowhub", "status"], { env: { ...env, OPENCLAW_CONFIG_PATH: deCfg } });
  const all = de.stdout + de.stderr;
  check("doc-engine left in the config: knowhub status and the load log say what to do, the log once", de.code === 0 && /leftover plugins\.entries\.doc-engine entry/.test(de.stdout) && /openclaw config unset plugins\.entries\.doc-engine/.test(de.stdout) && strip(de.stderr).split("leftover plugins.entries.doc-engine").length - 1 <= 1,
    all.slice(-1500));
}
const st = await oc(["knowhub", "status"]);
check("openclaw knowhub status", st.code === 0 && /reachable at/.test(st.stdout) && /allowConversationAccess true/.test(st.stdout), st.stdout + st.stderr.slice(-800));
const ins = await oc(["plugins", "inspect", "knowhub", "--runtime", "--json"]);
let insJ = {}; try { insJ = JSON.parse(ins.stdout.slice(ins.stdout.indexOf("{"))); } catch {}
check("plugins inspect: no diagnostics, every tool", Array.isArray(insJ.diagnostics) && insJ.diagnostics.length === 0 && ["semantic_doc_search", "kb_search", "kb_save", "kb_update", "kh_tool_search"].every((t) => JSON.stringify(insJ.tools).includes(t)), JSON.stringify(insJ.diagnostics ?? ins.stdout.slice(-800)));

// 4. knowhub stopped: the tool answers the clear error, the run completes.
kh.kill("SIGTERM");
await until("knowhub stopped", async () => { try { await fetch(`${api}/healthz`); return false; } catch { return true; } });
requests.length = 0;
const offlineNote = "Offline note: the e2e queue keeps this entry while knowhub is down.";
script = [
  { tool: "semantic_doc_search", args: { query: "heartbeat interval", topK: 3 } },
  { tool: "kb_save", args: { task: "check the offline queue", content: offlineNote, types: ["best-practice"] } },
];
const down = await oc(["agent", "--local", "--agent", "main", "--session-id", "e2e-1", "--json", "-m", "heartbeat?"]);
const dl = requests[requests.length - 1] ?? {};
check("knowhub down: run completes", down.code === 0, down.stderr.slice(-800));
check("knowhub down: the clear error", toolText(dl, 0).includes(`knowhub is not reachable at ${api}`), toolText(dl, 0));
check("knowhub down: search answers from the cache, marked as such", /knowhub unreachable/.test(toolText(dl, 0)) && /CACHED results from/.test(toolText(dl, 0)) && /gateway-heartbeat\.md > Gateway heartbeat > Heartbeat interval/.test(toolText(dl, 0)), toolText(dl, 0));
check("knowhub down: kb_save is kept in the offline queue", /offline queue \(\d+ waiting\)/.test(toolText(dl, 1)), toolText(dl, 1));

check("reminder: the session's next run is introduced again (the count was cleared at the run's end)", requests.length > 0 && systemText(requests[0]).includes(INTRO), systemText(requests[0]).slice(0, 300));

// 4b. knowhub back (same data): the queue is replayed in order before the
// next search; the saved entry is found.
kh = spawn(knowhub, khArgs, { stdio: ["ignore", "ignore", "pipe"] });
children.add(kh);
kh.stderr.on("data", (d) => (khLog += d));
const back = await until("knowhub back", async () => (await fetch(`${api}/api/docs/search?q=heartbeat`)).ok, 60_000).catch((e) => e);
const queueFile = join(home, ".openclaw", "knowhub", "offline-queue.json");
let queued = []; try { queued = JSON.parse(readFileSync(queueFile, "utf8")).items; } catch {}
check("offline queue: in the gateway's state directory, save first, then the transcript", queued.length === 2 && queued[0].kind === "kb_save" && queued[1].kind === "transcript", JSON.stringify(queued.map((x) => x.kind)));
requests.length = 0;
script = [{ tool: "kb_search", args: { query: "offline queue entry knowhub down" } }];
const up2 = await oc(["agent", "--local", "--agent", "main", "--session-id", "e2e-2", "--json", "-m", "offline?"]);
const ul = requests[requests.length - 1] ?? {};
const replayed = await until("the queued save searchable", async () => {
  const r = await (await fetch(`${api}/api/knowledge/search?q=offline+queue+entry+knowhub+down`)).json();
  return r.results?.find((e) => e.content === offlineNote);
}, 20_000).catch((e) => e);
let leftQ = null; try { leftQ = JSON.parse(readFileSync(queueFile, "utf8")).items.length; } catch { leftQ = 0; }
check("offline queue: replayed when knowhub is back, the entry found, the queue empty", !(back instanceof Error) && up2.code === 0 && !(replayed instanceof Error) && replayed.owner === "agent:main" && JSON.stringify(replayed.types) === '["strategy"]' && leftQ === 0,
  `${back?.message ?? ""} ${replayed?.message ?? JSON.stringify(replayed)} queue ${leftQ}; ${toolText(ul, 0).slice(0, 300)}`);

// 5. A gateway in managed mode: the plugin's service runs `knowhub up` on
// the configured repositories; /docsearch through chat.send answers from it
// without a model call; the docsearch commands reindex it; the knowhub child
// goes away with the gateway.
const inst = await gwStarted;
const gwCfg = JSON.parse(readFileSync(gwCfgPath, "utf8"));
check("openclaw plugins install: the README's install keeps the plugin's config", inst.code === 0 && /Installed plugin: knowhub/.test(inst.stdout) && gwCfg.plugins?.entries?.knowhub?.config?.repositories?.length === 1,
  inst.stdout.slice(-800) + inst.stderr.slice(-800) + JSON.stringify(gwCfg.plugins ?? {}).slice(0, 800));
const ready = await until("gateway ready", () => strip(gwLog).split("\n").some((l) => /(^|\s)\[gateway\] ready$/.test(l.trim())), 120_000).catch((e) => e);
check("gateway: ready", !(ready instanceof Error), gwLog.slice(-1500));
if (!(ready instanceof Error)) {
  console.log(`     gateway ready ${((Date.now() - t5) / 1000).toFixed(1)} s after its start`);
  const t6 = Date.now();
  const indexed = await until("managed knowhub indexed the repositories", async () => {
    const r = await fetch(`${mApi}/api/docs/search?q=heartbeat+interval`);
    return r.ok && (await r.json()).hits?.some((h) => h.repo === "fixture" && h.path === "gateway-heartbeat.md");
  }, 60_000).catch((e) => e);
  const pids = managedPids();
  check("managed mode: the gateway's service runs knowhub up on the configured repositories", !(indexed instanceof Error) && pids.length === 1, `${indexed?.message ?? ""} pids ${JSON.stringify(pids)}\n${gwLog.slice(-1500)}`);

  // /docsearch: a chat command, answered by the plugin without a model call.
  const before = requests.length;
  const sent = await call("chat.send", { sessionKey: "agent:main:main", message: "/docsearch heartbeat interval", idempotencyKey: `e2e-ds-${Date.now()}` });
  let reply = "";
  const hist = await until("the /docsearch reply in chat.history", async () => {
    const h = await call("chat.history", { sessionKey: "agent:main:main" });
    const m = [...h.stdout.matchAll(/\[1\] fixture:gateway-heartbeat\.md[^"]*/g)];
    if (m.length) reply = m[0][0];
    return m.length ? h.stdout : null;
  }, 60_000).catch((e) => e);
  check("/docsearch via chat.send: the top hit by path", !(hist instanceof Error) && /> Heartbeat interval/.test(reply),
    hist instanceof Error ? `${hist.message}\n${sent.stdout.slice(-500)}${sent.stderr.slice(-500)}` : reply);
  check("/docsearch via chat.send: no model call", requests.length === before, `${requests.length - before} model requests`);

  // reminderMode normal (every 3): a run of 5 model calls in the gateway
  // session, counted apart from the earlier runs: request 3 carries it.
  requests.length = 0;
  script = [1, 2, 3, 4].map((i) => ({ tool: "semantic_doc_search", args: { query: `fallback model chain ${i}` } }));
  await call("chat.send", { sessionKey: "agent:main:main", message: "How does the fallback chain work?", idempotencyKey: `e2e-rm-${Date.now()}` });
  const done = await until("the gateway run's last model call", () => requests.length >= 5 && toolText(requests[requests.length - 1], 3), 90_000).catch((e) => e);
  const c2 = cadence(requests, 3);
  check("reminder: normal, every 3 model calls in a gateway session, system text constant", !(done instanceof Error) && requests.length === 5 && c2.ok, `${requests.length} model calls; ${c2.info}`);
  console.log(`     ${c2.info}`);

  // The docsearch commands against the managed knowhub.
  const ix = await gwc(["docsearch", "index"]);
  check("openclaw docsearch index: a reindex", ix.code === 0 && /replayed the files read: 2 files/.test(ix.stdout) && /pipeline caught up/.test(ix.stdout), ix.stdout + ix.stderr.slice(-800));
  const full = await gwc(["docsearch", "index", "--full"]);
  check("openclaw docsearch index --full: the repositories re-read", full.code === 0 && /rescanned: 2 files published/.test(full.stdout) && /pipeline caught up/.test(full.stdout), full.stdout + full.stderr.slice(-800));
  const ixj = await gwc(["docsearch", "index", "--json"]);
  let ixjJ = {}; try { ixjJ = JSON.parse(ixj.stdout); } catch {}
  check("openclaw docsearch index --json: doc-engine's fields and knowhub's summary", ixj.code === 0 && ixjJ.totalFiles === 2 && ixjJ.repos?.fixture?.files === 2 && ixjJ.storageBytes > 0 && ixjJ.reindex?.caught_up === true, ixj.stdout.slice(0, 800) + ixj.stderr.slice(-800));
  const dst = await gwc(["docsearch", "status"]);
  check("openclaw docsearch status: index stats", dst.code === 0 && /^2 files, 2 sections, \d+ terms/m.test(dst.stdout) && /fixture: 2 files, 2 sections/.test(dst.stdout), dst.stdout + dst.stderr.slice(-800));

  // Stopping the gateway stops its knowhub.
  gw.kill("SIGTERM");
  const ex = await Promise.race([gwExit, new Promise((r) => setTimeout(() => r(null), 30_000))]);
  const gone = await until("the managed knowhub exited", async () => {
    if (pids.some(alive)) return false;
    try { await fetch(`${mApi}/healthz`); return false; } catch { return true; }
  }, 20_000).catch((e) => e);
  console.log(`     gateway checks took ${((Date.now() - t6) / 1000).toFixed(1)} s`);
  check("managed mode: the knowhub child is gone with the gateway", ex !== null && !(gone instanceof Error) && managedPids().length === 0, `gateway exit ${JSON.stringify(ex)}; still running: ${JSON.stringify(managedPids())}`);
  const nogw = await gwc(["docsearch", "status"]);
  check("managed mode without a gateway: docsearch status says the gateway starts knowhub, not `knowhub up`", nogw.code !== 0 && /managed mode: knowhub starts with the gateway/.test(nogw.stderr) && !/knowhub up/.test(nogw.stderr), nogw.stdout + nogw.stderr.slice(-800));
}

model.close();
cleanup();
rmSync(tmp, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
