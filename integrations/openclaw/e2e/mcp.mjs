#!/usr/bin/env node
// Checks knowhub's MCP server through OpenClaw's own MCP client:
//
//  1. `openclaw mcp probe --json` lists the five knowhub tools with no
//     diagnostics (a tool without read-only annotations would get one);
//  2. `openclaw agent --local` runs a real agent loop whose model (a
//     scripted OpenAI-compatible server in this process) calls
//     knowhub__search_docs; the result that reaches the model must be the
//     section knowhub ranks first for the same query.
//
// Usage (Node 24 first on PATH):
//   OPENCLAW_BIN=.../node_modules/.bin/openclaw KNOWHUB_BIN=.../knowhub \
//   KNOWHUB_NATS_URL=nats://127.0.0.1:4222 node integrations/openclaw/e2e/mcp.mjs
//
// The running knowhub must have indexed at least one section matching
// KNOWHUB_QUERY (default "fallback model chain"). FAKE_MODEL_PORT picks the
// scripted model's port (default: any free one). Exits non-zero with the
// reason on the first failed check. Uses only Node's standard library.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = (name, fallback) => {
  const v = process.env[name] ?? fallback;
  if (v === undefined || v === "") fail(`set ${name}`);
  return v;
};

function fail(msg) {
  console.error(`mcp e2e: FAIL: ${msg}`);
  process.exit(1);
}

const openclaw = env("OPENCLAW_BIN");
const knowhub = env("KNOWHUB_BIN");
const natsURL = env("KNOWHUB_NATS_URL");
// The data directory of the knowhub up serving natsURL: its NATS server
// takes the token kept there.
const dataArgs = process.env.KNOWHUB_DATA_DIR ? ["--data", process.env.KNOWHUB_DATA_DIR] : [];
const query = env("KNOWHUB_QUERY", "fallback model chain");
const modelPort = Number(env("FAKE_MODEL_PORT", "0"));
const tools = ["kb_save", "kb_search", "kb_update", "list_docs", "read_docs", "search_docs", "search_tools"].map((t) => `knowhub__${t}`);
// OpenClaw's MCP client offers a server's resources (knowhub's docs pages)
// to the model as two tools of its own.
const listed = [...tools, "knowhub__resources_list", "knowhub__resources_read"].sort();

function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => p.kill("SIGTERM"), opts.timeoutMs ?? 180_000);
    p.on("error", reject);
    p.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

// The last JSON value printed on stdout (OpenClaw may print log lines first).
function lastJSON(text, what) {
  for (let i = text.lastIndexOf("\n{"); ; i = text.lastIndexOf("\n{", i - 1)) {
    const start = i < 0 ? text.indexOf("{") : i + 1;
    if (start < 0) break;
    try {
      return JSON.parse(text.slice(start));
    } catch {
      if (i < 0) break;
    }
  }
  fail(`${what}: no JSON on stdout:\n${text.slice(-2000)}`);
}

// What knowhub itself ranks first: the MCP result must agree.
const direct = await run(knowhub, ["search", "--json", "--top-k", "1", "--nats-url", natsURL, ...dataArgs, query]);
if (direct.code !== 0) fail(`knowhub search: exit ${direct.code}\n${direct.stderr}`);
const top = JSON.parse(direct.stdout).hits?.[0];
if (!top) fail(`knowhub has no section for ${JSON.stringify(query)}; index some docs first`);
const wantPrefix = `[1] ${top.repo}:${top.path}`;

// The scripted model: no tool result yet → call knowhub__search_docs;
// a tool result present → answer with its first line.
const seen = { requests: 0, offered: [], toolResult: null };
const model = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const r = JSON.parse(body);
    seen.requests++;
    seen.offered = (r.tools ?? []).map((t) => t.function?.name);
    const toolMsg = (r.messages ?? []).find((m) => m.role === "tool");
    const chunk = (delta, finish) =>
      `data: ${JSON.stringify({
        id: `chatcmpl-${seen.requests}`,
        object: "chat.completion.chunk",
        created: Math.floor(Date.now() / 1000),
        model: "scripted",
        choices: [{ index: 0, delta, finish_reason: finish }],
      })}\n\n`;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if (!toolMsg) {
      res.write(chunk({ role: "assistant", content: "" }, null));
      res.write(
        chunk(
          {
            tool_calls: [
              { index: 0, id: "call_1", type: "function", function: { name: "knowhub__search_docs", arguments: JSON.stringify({ query, top_k: 3 }) } },
            ],
          },
          null,
        ),
      );
      res.write(chunk({}, "tool_calls"));
    } else {
      const content = Array.isArray(toolMsg.content) ? toolMsg.content.map((c) => c.text ?? "").join("\n") : String(toolMsg.content);
      seen.toolResult = content;
      res.write(chunk({ role: "assistant", content: `knowhub answered: ${content.split("\n")[0]}` }, null));
      res.write(chunk({}, "stop"));
    }
    res.end("data: [DONE]\n\n");
  });
});
await new Promise((resolve) => model.listen(modelPort, "127.0.0.1", resolve));
const port = model.address().port;

const home = mkdtempSync(join(tmpdir(), "knowhub-openclaw-mcp-"));
const config = {
  mcp: { servers: { knowhub: { command: knowhub, args: ["mcp", "--nats-url", natsURL, ...dataArgs] } } },
  models: {
    providers: {
      scripted: {
        api: "openai-completions",
        baseUrl: `http://127.0.0.1:${port}/v1`,
        apiKey: "not-a-real-key",
        models: [
          { id: "scripted", name: "scripted", input: ["text"], contextWindow: 128000, maxTokens: 4096, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } },
        ],
      },
    },
  },
  agents: { defaults: { model: { primary: "scripted/scripted" } } },
  tools: { toolSearch: false },
  logging: { file: join(home, "openclaw.log") },
};
writeFileSync(join(home, "openclaw.json"), JSON.stringify(config, null, 2));
const ocEnv = { ...process.env, OPENCLAW_HOME: home, OPENCLAW_CONFIG_PATH: join(home, "openclaw.json"), OPENCLAW_OFFLINE: "1" };

try {
  // 1. The probe lists exactly knowhub's seven tools and the two resource tools, without diagnostics.
  const probe = await run(openclaw, ["mcp", "probe", "--json"], { env: ocEnv });
  if (probe.code !== 0) fail(`openclaw mcp probe: exit ${probe.code}\n${probe.stderr}`);
  const p = lastJSON(probe.stdout, "openclaw mcp probe");
  const got = [...(p.tools ?? [])].sort();
  if (JSON.stringify(got) !== JSON.stringify(listed)) fail(`probe lists ${JSON.stringify(got)}, want ${JSON.stringify(listed)}`);
  if ((p.diagnostics ?? []).length > 0) fail(`probe diagnostics: ${JSON.stringify(p.diagnostics)}`);
  if (p.servers?.knowhub?.tools !== tools.length) fail(`probe server entry: ${JSON.stringify(p.servers)}`);
  if (/warn/i.test(probe.stderr)) fail(`probe warned:\n${probe.stderr}`);
  console.log(`mcp e2e: probe lists ${got.length} tools, no diagnostics`);

  // 2. One agent run: the model calls knowhub__search_docs through OpenClaw.
  const agent = await run(
    openclaw,
    ["agent", "--local", "--agent", "main", "--session-id", `mcp-e2e-${Date.now()}`, "--json", "-m", `Search the docs: ${query}`],
    { env: ocEnv },
  );
  if (agent.code !== 0) fail(`openclaw agent: exit ${agent.code}\n${agent.stderr.slice(-3000)}`);
  if (!seen.offered.includes("knowhub__search_docs")) fail(`the model was not offered knowhub__search_docs: ${JSON.stringify(seen.offered)}`);
  if (seen.toolResult === null) fail(`no tool result reached the model (${seen.requests} model calls)\n${agent.stderr.slice(-3000)}`);
  if (!seen.toolResult.includes(wantPrefix)) fail(`tool result does not start with ${JSON.stringify(wantPrefix)}:\n${seen.toolResult.slice(0, 1500)}`);
  if (!agent.stdout.includes("knowhub answered:")) fail(`the final answer is missing from the agent's output:\n${agent.stdout.slice(-2000)}`);
  console.log(`mcp e2e: agent called knowhub__search_docs in ${seen.requests} model calls; result starts ${JSON.stringify(wantPrefix)}`);
} finally {
  model.close();
  rmSync(home, { recursive: true, force: true });
}
