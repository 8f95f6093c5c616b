import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// The offline queue and search cache go to a state directory of their own.
process.env.OPENCLAW_STATE_DIR = mkdtempSync(join(tmpdir(), "knowhub-plugin-test-"));
const { default: plugin } = await import("../index.js");
import { INTRO, REMINDER } from "../lib.js";

// register() against a recording stand-in for OpenClaw's plugin API: the
// hooks and tools as OpenClaw would call them for one session's runs.
async function registered(config) {
  const hooks = {};
  const services = [];
  let factory, command;
  const transforms = [];
  const api = {
    pluginConfig: config,
    config: { plugins: { entries: { knowhub: { hooks: { allowConversationAccess: true } } } } },
    logger: { warn() {}, info() {} },
    on: (name, fn) => (hooks[name] ??= []).push(fn),
    registerTool: (f) => { factory = f; },
    registerCommand: (c) => { command = c; }, registerCli() {}, registerService: (sv) => services.push(sv),
    registerTextTransforms: (t) => transforms.push(t),
  };
  plugin.register(api);
  const fire = async (name, event, ctx) => {
    let out;
    for (const fn of hooks[name] ?? []) out = (await fn(event, ctx)) ?? out;
    return out;
  };
  // input applies the text transforms as OpenClaw does to each model request.
  const input = (text) => transforms.flatMap((t) => t.input ?? []).reduce((t, r) => t.replace(r.from, r.to), text);
  return { fire, command, input, transforms, services, tools: (ctx) => Object.fromEntries(factory(ctx).map((t) => [t.name, t])) };
}

test("plugin: the reminder rides on a tool result every N model calls; the run's end clears the count", async () => {
  const srv = createServer((req, res) => { res.writeHead(200, { "content-type": "application/json" }); res.end('{"hits":[]}'); });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  try {
    const { fire, tools } = await registered({ apiUrl: `http://127.0.0.1:${srv.address().port}`, reminderMode: "normal" });
    const ctx = { sessionId: "s1", sessionKey: "agent:main:main", agentId: "main" };
    const search = tools(ctx).kh_tool_search;
    const run = async (calls) => {
      const notes = [];
      const p = await fire("before_prompt_build", {}, ctx);
      for (let c = 1; c <= calls; c++) {
        await fire("model_call_started", { runId: "r" }, ctx);
        const r = await search.execute("id", { query: "x" });
        if (r.content[0].text.includes(REMINDER)) notes.push(c);
      }
      await fire("agent_end", { messages: [] }, ctx);
      return { intro: p?.prependSystemContext, notes };
    };
    assert.deepEqual(await run(7), { intro: INTRO, notes: [3, 6] });
    assert.deepEqual(await run(2), { intro: INTRO, notes: [] }, "a new run: introduced again, counted from zero");
    assert.deepEqual(await run(3), { intro: INTRO, notes: [3] });
  } finally {
    srv.close();
  }
});

test("plugin: /docsearch asks for the top 3 and answers from knowhub alone", async () => {
  const asked = [];
  const srv = createServer((req, res) => {
    asked.push(new URL(req.url, "http://x").searchParams);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ hits: [1, 2, 3].map((i) => ({ repo: "core", path: `p${i}.md`, heading_path: ["H"], score: 4 - i, content: "text" })) }));
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  try {
    const { command } = await registered({ apiUrl: `http://127.0.0.1:${srv.address().port}` });
    assert.equal(command.name, "docsearch");
    const r = await command.handler({ args: " heartbeat interval " });
    assert.equal(asked.length, 1);
    assert.equal(asked[0].get("q"), "heartbeat interval");
    assert.equal(asked[0].get("top_k"), "3");
    assert.match(r.text, /^3 documentation sections for "heartbeat interval":\n\n\[1\] core:p1\.md > H/);
    assert.deepEqual(await command.handler({ args: "" }), { text: "usage: /docsearch <query>" });
  } finally {
    srv.close();
  }
});

// Last in this file: once the text transform has run, the process's
// reminders go through it and no longer ride on tool results.
test("plugin: every Nth model request of a run carries the reminder, with or without knowhub tool calls", async () => {
  const srv = createServer((req, res) => { res.writeHead(200, { "content-type": "application/json" }); res.end('{"hits":[]}'); });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  try {
    const { fire, tools, input } = await registered({ apiUrl: `http://127.0.0.1:${srv.address().port}`, reminderMode: "normal" });
    const ctx = { sessionId: "s2", sessionKey: "agent:main:s2", agentId: "main" };
    const search = tools(ctx).kh_tool_search;
    const run = async (calls, useTool) => {
      const p = await fire("before_prompt_build", {}, ctx);
      const prompt = `How does the fallback chain work?\n\n${p.appendContext}`;
      const seen = [];
      for (let c = 1; c <= calls; c++) {
        await fire("model_call_started", { runId: "r" }, ctx);
        const sent = input(prompt);
        assert.ok(!sent.includes("[knowhub-reminder:"), sent);
        if (sent.includes(REMINDER)) seen.push(c);
        if (useTool) assert.ok(!(await search.execute("id", { query: "x" })).content[0].text.includes(REMINDER), "no reminder on tool results");
      }
      await fire("agent_end", { messages: [] }, ctx);
      return { intro: p.prependSystemContext, seen };
    };
    assert.deepEqual(await run(7, false), { intro: INTRO, seen: [3, 6] }, "only core tools: still reminded");
    assert.deepEqual(await run(4, true), { intro: INTRO, seen: [3] }, "a new run counts from zero");
    assert.equal(input("[knowhub-reminder:%E0%A4%A]"), "", "an unreadable slot becomes nothing");
    assert.equal(`${(await registered({ apiUrl: "http://127.0.0.1:9" })).transforms[0].input[0].to}`, "", "as a string, the replacement is empty");
  } finally {
    srv.close();
  }
});

test("plugin: kb_save saves in org:openclaw as agent:<id>; offline, writes queue and replay in order, searches answer from the cache", async () => {
  const got = [];
  let up = true;
  const handler = (req, res) => {
    let b = "";
    req.on("data", (d) => (b += d));
    req.on("end", () => {
      if (!up) { req.socket.destroy(); return; }
      got.push({ method: req.method, url: req.url, body: b ? JSON.parse(b) : null });
      res.writeHead(200, { "content-type": "application/json" });
      if (req.url.startsWith("/api/knowledge/search")) res.end(JSON.stringify({ count: 1, results: [{ id: "k1" }], prompt: "<kb>found</kb>" }));
      else if (req.url.startsWith("/api/docs/search")) res.end(JSON.stringify({ hits: [{ repo: "core", path: "a.md", score: 1, content: "alpha" }] }));
      else if (req.method === "POST") res.end(JSON.stringify({ id: `id${got.length}`, state: "active" }));
      else res.end(JSON.stringify({ id: "k1" }));
    });
  };
  const srv = createServer(handler);
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const port = srv.address().port;
  try {
    const { tools } = await registered({ apiUrl: `http://127.0.0.1:${port}` });
    const t = tools({ sessionId: "s3", sessionKey: "agent:coder:main", agentId: "coder" });
    const saved = await t.kb_save.execute("1", { task: "build", content: "use buildx", types: ["best-practice", "solution"] });
    assert.match(saved.content[0].text, /^Saved as id1\./);
    assert.deepEqual(got[0].body.scopes, ["org:openclaw"]);
    assert.equal(got[0].body.owner, "agent:coder");
    assert.deepEqual(got[0].body.types, ["strategy", "usecase"]);
    assert.match((await t.semantic_doc_search.execute("2", { query: "alpha" })).content[0].text, /core:a\.md/);

    up = false; // connections are reset
    const q1 = await t.kb_save.execute("3", { task: "deploy", content: "first offline", types: ["tool"] });
    assert.match(q1.content[0].text, /knowhub unreachable .*offline queue \(1 waiting\)/);
    const q2 = await t.kb_update.execute("4", { knowledge_id: "k1", is_helpful: true });
    assert.match(q2.content[0].text, /offline queue \(2 waiting\)/);
    const cached = await t.semantic_doc_search.execute("5", { query: "alpha" });
    assert.match(cached.content[0].text, /^semantic_doc_search: knowhub unreachable: .*\n\nCACHED results from .*\n\n1 documentation section for "alpha":\n\n\[1\] core:a\.md/s);
    const none = await t.kb_search.execute("6", { query: "never asked" });
    assert.match(none.content[0].text, /^kb_search: knowhub unreachable: knowhub is not reachable/);
    assert.ok(!none.content[0].text.includes("CACHED"));

    up = true;
    const n = got.length;
    const found = await t.kb_search.execute("7", { query: "deploy" });
    assert.equal(found.content[0].text, "<kb>found</kb>");
    assert.deepEqual(got.slice(n).map((x) => `${x.method} ${x.url.split("?")[0]}`), ["POST /api/knowledge", "PUT /api/knowledge/k1", "GET /api/knowledge/search"], "replayed in order before the search");
    assert.equal(got[n].body.content, "first offline");
  } finally {
    srv.closeAllConnections();
    srv.close();
  }
});

test("docsearch <query>: the shorthand's arguments", async () => {
  const { shorthandArgs } = await import("../index.js");
  assert.deepEqual(shorthandArgs(["heartbeat", "-k", "2", "interval", "--json", "-r", "core"], 5), { words: ["heartbeat", "interval"], opts: { topK: "2", json: true, repo: "core" } });
  assert.deepEqual(shorthandArgs(["--top-k=3", "x"], 5), { words: ["x"], opts: { topK: "3" } });
  assert.deepEqual(shorthandArgs(["x"], 5), { words: ["x"], opts: { topK: "5" } });
  assert.match(shorthandArgs(["x", "-k"], 5).error, /-k needs a value/);
  assert.match(shorthandArgs(["--full"], 5).error, /unknown option --full/);
});

test("plugin: managed mode starts knowhub up --openclaw with a doc-engine block's repositories in English only", async () => {
  const dir = mkdtempSync(join(tmpdir(), "kh-managed-"));
  const seen = join(dir, "seen.json");
  const bin = join(dir, "knowhub");
  // A stand-in for knowhub: it keeps the config it was given, then exits.
  writeFileSync(bin, `#!/bin/sh\n[ "$1 $2" = "up --openclaw" ] && cp "$3" "${seen}"\n`, { mode: 0o755 });
  const { services } = await registered({
    apiUrl: "http://127.0.0.1:9", knowhubBin: bin, dataDir: join(dir, "data"),
    repositories: [{ name: "docs", path: dir, priority: 1, type: "core" }, { name: "zh", path: dir, languages: ["zh-CN"] }],
  });
  const managed = services.find((sv) => sv.id === "knowhub-managed");
  managed.start();
  const deadline = Date.now() + 5000;
  while (!existsSync(seen) && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  await managed.stop();
  const cfg = JSON.parse(readFileSync(seen, "utf8")).plugins.entries.knowhub.config;
  assert.deepEqual(cfg.repositories.map((r) => [r.name, r.languages]), [["docs", ["en"]], ["zh", ["zh-CN"]]]);
});
