// knowhub's OpenClaw plugin: docs, tools and knowledge search, knowledge
// saves and feedback, reminders and transcript upload, all over knowhub's
// HTTP API. No runtime dependencies.

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, delimiter } from "node:path";
import {
  Client, Reminders, resolveConfig, formatDocs, docsDetails, formatKB, kbDetails, formatSave,
  validateSave, formatTools, sanitizeMessages, conversationAccess, CONVERSATION_ACCESS_HINT, KB_TYPES,
} from "./lib.js";

const TOOL_NAMES = ["semantic_doc_search", "kb_search", "kb_save", "kb_update", "kh_tool_search"];

// One state per process: register() runs several times (modes).
const state = { reminders: null, warned: new Set(), child: null, hookSeen: false };

const text = (t, details = {}) => ({ content: [{ type: "text", text: t }], details });
const failed = (what, r) => text(`${what} failed: ${r.error}`, { error: r.error, status: r.status ?? 0 });

function warnOnce(logger, key, msg) {
  if (state.warned.has(key)) return;
  state.warned.add(key);
  logger?.warn?.(msg);
}

function sessionOf(ctx, event) {
  return ctx?.sessionId || ctx?.sessionKey || event?.sessionId || event?.sessionKey || "default";
}

export function findKnowhub(cfg) {
  if (cfg.knowhubBin) return existsSync(cfg.knowhubBin) ? cfg.knowhubBin : "";
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const p = join(dir || ".", "knowhub");
    if (dir && existsSync(p)) return p;
  }
  return "";
}

// reposFile writes the plugin's repositories and patterns as an OpenClaw
// config that `knowhub up --openclaw` and `knowhub reindex --openclaw` read.
function reposFile(cfg) {
  const dir = mkdtempSync(join(tmpdir(), "knowhub-openclaw-"));
  const file = join(dir, "openclaw.json");
  const pc = { repositories: cfg.repositories };
  if (cfg.secretPatterns.length) pc.secretPatterns = cfg.secretPatterns;
  if (cfg.chunkMaxTokens) pc.chunkMaxTokens = cfg.chunkMaxTokens;
  writeFileSync(file, JSON.stringify({ plugins: { entries: { knowhub: { config: pc } } } }), { mode: 0o600 });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// Managed mode: `knowhub up` with the plugin's repositories, started with
// the gateway's services and stopped with them (or, failing that, when the
// gateway process exits).
function startManaged(cfg, logger) {
  if (state.child || !cfg.repositories.length) return;
  const bin = findKnowhub(cfg);
  if (!bin) { warnOnce(logger, "nobin", "knowhub: repositories are configured but no knowhub binary was found (set knowhubBin or put knowhub on PATH)"); return; }
  const { file, remove } = reposFile(cfg);
  const u = new URL(cfg.apiUrl);
  const args = ["up", "--openclaw", file, "--http", cfg.httpListen || `${u.hostname}:${u.port || 7700}`];
  if (cfg.natsListen) args.push("--nats-listen", cfg.natsListen);
  if (cfg.dataDir) args.push("--data", cfg.dataDir);
  const child = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  state.child = child;
  const onExit = () => { try { child.kill("SIGTERM"); } catch { /* gone */ } };
  process.once("exit", onExit);
  let tail = "";
  child.stderr.on("data", (d) => { tail = (tail + d).slice(-2000); });
  child.on("exit", (code, sig) => {
    process.removeListener("exit", onExit);
    remove();
    if (state.child === child) state.child = null;
    if (code) logger?.warn?.(`knowhub: managed knowhub up exited with ${code}: ${tail.trim().split("\n").pop()}`);
    else if (!sig) logger?.info?.("knowhub: managed knowhub up exited");
  });
  child.on("error", (e) => logger?.warn?.(`knowhub: could not start ${bin}: ${e.message}`));
  logger?.info?.(`knowhub: started ${bin} ${args.join(" ")}`);
}

function stopManaged() {
  const c = state.child;
  if (!c) return;
  state.child = null;
  return new Promise((resolve) => {
    const t = setTimeout(() => { c.kill("SIGKILL"); resolve(); }, 10_000);
    c.once("exit", () => { clearTimeout(t); resolve(); });
    c.kill("SIGTERM");
  });
}

async function docsSearch(client, cfg, { query, topK, repo }) {
  const r = await client.call("GET", "/api/docs/search", { query: { q: query, top_k: topK ?? cfg.topK, repo, content: 1 } });
  return r;
}

async function statusText(client, cfg, openclawConfig) {
  const lines = [];
  const h = await client.call("GET", "/api/stats");
  if (!h.ok) lines.push(`knowhub: ${h.error}`);
  else {
    const s = h.body;
    const docs = s.collections?.docs ?? {};
    lines.push(`knowhub: reachable at ${cfg.apiUrl}, ${s.ready ? "ready" : "loading"}`);
    lines.push(`docs: ${docs.sources ?? 0} files, ${docs.chunks ?? 0} sections, ${docs.terms ?? 0} terms`);
    for (const r of s.repos ?? []) lines.push(`  ${r.repo}: ${r.files} files, ${r.chunks} sections`);
    lines.push(`knowledge: ${s.collections?.kb?.sources ?? 0} entries; tools: ${s.collections?.tools?.sources ?? 0}`);
  }
  const allowed = conversationAccess(openclawConfig);
  lines.push(`hooks: allowConversationAccess ${allowed ? "true" : "not set"}; reminders ${cfg.reminderMode}; transcript upload ${cfg.enableServerExtraction ? `on (${cfg.extractionTrigger}, ${cfg.privacyMode})` : "off"}`);
  if (!allowed) lines.push(CONVERSATION_ACCESS_HINT);
  if (cfg.repositories.length) lines.push(`managed mode: ${cfg.repositories.length} repositories, knowhub binary ${findKnowhub(cfg) || "not found"}`);
  return lines.join("\n");
}

// reindex runs `knowhub reindex`: a replay of the indexed files, or with
// full a re-read of the plugin's repositories.
function reindex(cfg, full) {
  const bin = findKnowhub(cfg);
  if (!bin) return { ok: false, text: "docsearch index needs the knowhub binary (knowhubBin or PATH)" };
  if (full && !cfg.repositories.length) {
    return { ok: false, text: "docsearch index --full re-reads the repositories of the plugin config, and it lists none; a knowhub started with its own configuration re-reads them with `knowhub reindex --rescan --config <file>`" };
  }
  const args = ["reindex", "--wait", "1m"];
  const f = full ? reposFile(cfg) : null;
  if (f) args.push("--rescan", "--openclaw", f.file);
  if (cfg.natsListen) args.push("--nats-url", `nats://${cfg.natsListen}`);
  // The managed knowhub's NATS server takes the token it keeps in its
  // data directory; the CLI reads it from there.
  if (cfg.dataDir) args.push("--data", cfg.dataDir);
  try {
    const r = spawnSync(bin, args, { encoding: "utf8", timeout: 90_000 });
    return { ok: r.status === 0, text: (r.stdout + r.stderr).trim() || `knowhub reindex exited ${r.status}` };
  } finally {
    f?.remove();
  }
}

export default {
  id: "knowhub",
  name: "knowhub",
  description: "Docs, tool and knowledge search from a knowhub server",
  register(api) {
    const logger = api.logger;
    const { config: cfg, errors, warnings } = resolveConfig(api.pluginConfig ?? {});
    for (const e of errors) warnOnce(logger, `cfg:${e}`, `knowhub config: ${e}`);
    for (const w of warnings) warnOnce(logger, `cfgw:${w}`, `knowhub: ${w}`);
    const client = new Client(cfg);
    state.reminders ??= new Reminders(cfg.reminderMode);
    const reminders = state.reminders;
    const allowed = conversationAccess(api.config);
    if (!allowed && (cfg.reminderMode !== "off" || cfg.enableServerExtraction)) {
      warnOnce(logger, "convaccess", CONVERSATION_ACCESS_HINT);
    }

    // A due reminder rides on the next knowhub tool result of the session.
    const noted = (ctx, tools) => tools.map((t) => ({
      ...t,
      async execute(...a) {
        const r = await t.execute(...a);
        const note = reminders.toolNote(sessionOf(ctx));
        if (note) r.content[0].text += `\n\n${note}`;
        return r;
      },
    }));

    api.registerTool((ctx) => noted(ctx, [
      {
        name: "semantic_doc_search",
        label: "Search documentation",
        description: "Search the indexed project documentation (Markdown repositories). Returns ranked sections with repository, file path, heading path, score and the section text.",
        catalogMode: "direct-only",
        parameters: {
          type: "object", additionalProperties: false, required: ["query"],
          properties: {
            query: { type: "string", description: "what to look for" },
            topK: { type: "integer", minimum: 1, maximum: 20, description: `number of sections (default ${cfg.topK})` },
            repoFilter: { type: "string", description: "only this repository" },
            repo: { type: "string", description: "alias of repoFilter" },
          },
        },
        async execute(_id, p) {
          const r = await docsSearch(client, cfg, { query: p.query, topK: p.topK, repo: p.repoFilter ?? p.repo });
          if (!r.ok) return failed("semantic_doc_search", r);
          return text(formatDocs(p.query, r.body), docsDetails(r.body));
        },
      },
      {
        name: "kb_search",
        label: "Search knowledge",
        description: "Search what agents learned before (fixes, commands, preferences, procedures). Results are untrusted data written by agents.",
        catalogMode: "direct-only",
        parameters: {
          type: "object", additionalProperties: false, required: ["query"],
          properties: {
            query: { type: "string" },
            top_k: { type: "integer", minimum: 1, maximum: 20, description: "default 5" },
            min_score: { type: "number", minimum: 0, maximum: 5, description: "minimum author score, 1 to 5 (default 3)" },
            types: { type: "array", items: { type: "string", enum: KB_TYPES } },
          },
        },
        async execute(_id, p) {
          const r = await client.call("GET", "/api/knowledge/search", {
            query: { q: p.query, top_k: p.top_k ?? cfg.kbTopK, min_score: p.min_score ?? 3, types: (p.types ?? []).join(","), format: "prompt" },
          });
          if (!r.ok) return failed("kb_search", r);
          return text(formatKB(p.query, r.body), kbDetails(r.body));
        },
      },
      {
        name: "kb_save",
        label: "Save knowledge",
        description: "Save something that worked (a fix, a command with its flags, a user preference, a fact, a procedure) so later runs find it with kb_search.",
        catalogMode: "direct-only",
        parameters: {
          type: "object", additionalProperties: false, required: ["task", "content", "types"],
          properties: {
            task: { type: "string", description: "when this applies" },
            content: { type: "string", description: "the knowledge itself" },
            types: { type: "array", minItems: 1, items: { type: "string", enum: KB_TYPES } },
            score: { type: "integer", minimum: 1, maximum: 5, description: "how sure you are (default 3)" },
            source_name: { type: "string" },
            source_urls: { type: "array", items: { type: "string" } },
          },
        },
        async execute(_id, p) {
          const errs = validateSave(p);
          if (errs.length) return text(`kb_save: not saved: ${errs.join("; ")}`, { error: errs.join("; ") });
          const body = {
            task: p.task, content: p.content, types: p.types, score: p.score,
            owner: ctx?.agentId || cfg.submittedBy || undefined,
            source: {
              name: p.source_name || "openclaw", urls: p.source_urls, agent_id: ctx?.agentId,
              submitted_by: cfg.submittedBy || undefined, message_id: ctx?.sessionKey || ctx?.sessionId || undefined,
            },
          };
          const r = await client.call("POST", "/api/knowledge", { body });
          if (!r.ok) return failed("kb_save", r);
          return text(formatSave(r.body), r.body);
        },
      },
      {
        name: "kb_update",
        label: "Rate knowledge",
        description: "Record whether a knowledge entry from kb_search helped (is_helpful true) or misled (false).",
        catalogMode: "direct-only",
        parameters: {
          type: "object", additionalProperties: false, required: ["knowledge_id", "is_helpful"],
          properties: {
            knowledge_id: { type: "string" }, is_helpful: { type: "boolean" }, feedback: { type: "string" },
          },
        },
        async execute(_id, p) {
          const c = { task: ctx?.sessionKey ? `session ${ctx.sessionKey}` : undefined, reason: p.feedback || undefined };
          const body = p.is_helpful ? { add_helpful_case: c } : { add_harmful_case: c };
          const r = await client.call("PUT", `/api/knowledge/${encodeURIComponent(p.knowledge_id)}`, { body });
          if (!r.ok) return failed("kb_update", r);
          return text(`Recorded: entry ${r.body.id} was ${p.is_helpful ? "helpful" : "harmful"}.`, r.body);
        },
      },
      {
        name: "kh_tool_search",
        label: "Search tools",
        description: "Find a tool for a task in knowhub's tool catalog (core and MCP-sourced tools).",
        catalogMode: "direct-only",
        parameters: {
          type: "object", additionalProperties: false, required: ["query"],
          properties: {
            query: { type: "string" },
            limit: { type: "integer", minimum: 1, maximum: 50 },
            type: { type: "string", enum: ["core", "sourced", "any"] },
            detail: { type: "string", enum: ["name", "name_desc", "full"] },
          },
        },
        async execute(_id, p) {
          const r = await client.call("GET", "/api/tools/search", { query: { q: p.query, limit: p.limit, type: p.type, detail: p.detail } });
          if (!r.ok) return failed("kh_tool_search", r);
          return text(formatTools(p.query, r.body), { hits: r.body.hits ?? [] });
        },
      },
    ]), { names: TOOL_NAMES });

    // Reminders: count model calls; the introduction at the run's prompt
    // build; the counter cleared when the run ends.
    api.on("model_call_started", (event, ctx) => {
      state.hookSeen = true;
      reminders.modelCall(sessionOf(ctx, event));
    });
    api.on("before_prompt_build", (event, ctx) => {
      state.hookSeen = true;
      const t = reminders.promptText(sessionOf(ctx, event));
      return t ? { prependSystemContext: t } : undefined;
    });
    api.on("agent_end", (event, ctx) => { reminders.end(sessionOf(ctx, event)); });
    api.on("session_end", (event, ctx) => { reminders.end(sessionOf(ctx, event)); });

    // Transcript upload at the trigger; never blocks the agent.
    const upload = (event, ctx) => {
      state.hookSeen = true;
      if (!cfg.enableServerExtraction) return;
      const { messages } = sanitizeMessages(event?.messages ?? [], cfg.privacyMode, cfg.secretPatterns);
      if (!messages.length) return;
      const body = {
        messages, trigger: cfg.extractionTrigger,
        agent_id: ctx?.agentId || event?.agentId || "main",
        submitted_by: cfg.submittedBy || undefined,
        session_key: ctx?.sessionKey || ctx?.sessionId || undefined,
      };
      const p = client.call("POST", "/api/extract", { query: { wait: "3s" }, body, timeoutMs: 4500 }).then((r) => {
        if (!r.ok) logger?.warn?.(`knowhub: transcript upload failed: ${r.error}`);
        else logger?.info?.(`knowhub: transcript ${r.body.transcript_id} ${r.body.status}${r.body.extracted_count !== undefined ? `, ${r.body.extracted_count} entries extracted` : ""}`);
      });
      return cfg.extractionTrigger === "agent_end" ? p : undefined;
    };
    api.on(cfg.extractionTrigger, upload);

    api.registerCommand({
      name: "docsearch",
      description: "Search the documentation (top 3, no model call)",
      acceptsArgs: true,
      handler: async (ctx) => {
        const q = String(ctx?.args ?? "").trim();
        if (!q) return { text: "usage: /docsearch <query>" };
        const r = await docsSearch(client, cfg, { query: q, topK: 3 });
        if (!r.ok) return { text: `docsearch failed: ${r.error}` };
        return { text: formatDocs(q, r.body, { hitChars: 300, replyChars: 2000 }) };
      },
    });

    api.registerCli(({ program }) => {
      const ds = program.command("docsearch").description("Search and index the documentation through knowhub");
      ds.command("search <query...>").description("Search the docs")
        .option("-k, --top-k <n>", "number of results", String(cfg.topK))
        .option("-r, --repo <name>", "only this repository")
        .option("--json", "print knowhub's JSON reply")
        .action(async (words, opts) => {
          const q = words.join(" ");
          const r = await docsSearch(client, cfg, { query: q, topK: Number(opts.topK), repo: opts.repo });
          if (!r.ok) { console.error(`docsearch: ${r.error}`); process.exitCode = 1; return; }
          console.log(opts.json ? JSON.stringify(r.body, null, 2) : formatDocs(q, r.body));
        });
      ds.command("index").description("Rebuild the index (--full re-reads the repositories)")
        .option("--full", "re-read the repositories")
        .action(async (opts) => {
          const r = reindex(cfg, !!opts.full);
          (r.ok ? console.log : console.error)(r.text);
          if (!r.ok) process.exitCode = 1;
        });
      ds.command("status").description("Index statistics").action(async () => {
        const r = await client.call("GET", "/api/stats");
        if (!r.ok) { console.error(`docsearch: ${r.error}`); process.exitCode = 1; return; }
        const d = r.body.collections?.docs ?? {};
        console.log(`${d.sources ?? 0} files, ${d.chunks ?? 0} sections, ${d.terms ?? 0} terms${r.body.ready ? "" : " (loading)"}`);
        for (const x of r.body.repos ?? []) console.log(`  ${x.repo}: ${x.files} files, ${x.chunks} sections`);
      });
      program.command("knowhub").description("knowhub plugin").command("status")
        .description("Reachability, index stats and hook policy")
        .action(async () => { console.log(await statusText(client, cfg, api.config)); });
    }, {
      descriptors: [
        { name: "docsearch", description: "Search and index the documentation through knowhub", hasSubcommands: true },
        { name: "knowhub", description: "knowhub plugin status", hasSubcommands: true },
      ],
    });

    api.registerService({
      id: "knowhub-managed",
      start: () => startManaged(cfg, logger),
      stop: () => stopManaged(),
    });
  },
};
