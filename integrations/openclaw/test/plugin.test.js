import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import plugin from "../index.js";
import { INTRO, REMINDER } from "../lib.js";

// register() against a recording stand-in for OpenClaw's plugin API: the
// hooks and tools as OpenClaw would call them for one session's runs.
async function registered(config) {
  const hooks = {};
  let factory, command;
  const api = {
    pluginConfig: config,
    config: { plugins: { entries: { knowhub: { hooks: { allowConversationAccess: true } } } } },
    logger: { warn() {}, info() {} },
    on: (name, fn) => (hooks[name] ??= []).push(fn),
    registerTool: (f) => { factory = f; },
    registerCommand: (c) => { command = c; }, registerCli() {}, registerService() {},
  };
  plugin.register(api);
  const fire = async (name, event, ctx) => {
    let out;
    for (const fn of hooks[name] ?? []) out = (await fn(event, ctx)) ?? out;
    return out;
  };
  return { fire, command, tools: (ctx) => Object.fromEntries(factory(ctx).map((t) => [t.name, t])) };
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
