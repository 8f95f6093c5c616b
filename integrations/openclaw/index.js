// knowhub's OpenClaw plugin: docs, tools and knowledge search, knowledge
// saves and feedback, reminders and transcript upload, all over knowhub's
// HTTP API. No runtime dependencies.

import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { mkdtempSync, writeFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir, homedir } from "node:os";
import { join, delimiter } from "node:path";
import {
  Client, Reminders, resolveConfig, formatDocs, docsDetails, docEngineResults, formatKB, kbDetails, formatSave,
  validateSave, formatTools, sanitizeMessages, conversationAccess, CONVERSATION_ACCESS_HINT, KB_TYPES,
  REMINDER_SLOT_RE, KB_SCOPE, KB_TYPES_ACCEPTED, normalizeTypes, docEngineNotice, docEngineStats,
  OfflineQueue, ResultCache, stateDirOf, managedConfig,
} from "./lib.js";

const TOOL_NAMES = ["semantic_doc_search", "kb_search", "kb_save", "kb_update", "kh_tool_search"];

// One state per process: register() runs several times (modes), and
// OpenClaw may import this module more than once (the tools of one import,
// the hooks or text transforms of another), so the state lives on
// globalThis.
const state = (globalThis[Symbol.for("knowhub.openclaw.state")] ??= {
  reminders: null, warned: new Set(), child: null, hookSeen: false, queue: null, cache: null, timer: null,
});

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
  writeFileSync(file, JSON.stringify({ plugins: { entries: { knowhub: { config: managedConfig(cfg) } } } }), { mode: 0o600 });
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

async function docsSearch(client, cfg, { query, topK, repo }, off) {
  const q = { q: query, top_k: topK ?? cfg.topK, repo, content: 1 };
  if (off) return off.search("docs", "/api/docs/search", q);
  return client.call("GET", "/api/docs/search", { query: q });
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
  const doc = docEngineNotice(openclawConfig);
  if (doc) lines.push(doc);
  if (state.queue?.size) lines.push(`offline queue: ${state.queue.size} writes waiting for knowhub (${state.queue.file})`);
  return lines.join("\n");
}

// printJSON writes to stdout itself: with --json in the command line,
// OpenClaw sends console.log to stderr, keeping stdout for JSON.
const printJSON = (v) => process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);

// shorthandArgs reads `docsearch <query> [-k N] [-r NAME] [--json]`.
export function shorthandArgs(args, topK) {
  const words = [], opts = { topK: String(topK) };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const eq = a.match(/^(--top-k|--repo)=(.*)$/);
    if (eq) { opts[eq[1] === "--top-k" ? "topK" : "repo"] = eq[2]; continue; }
    if (a === "-k" || a === "--top-k" || a === "-r" || a === "--repo") {
      if (i + 1 >= args.length) return { error: `${a} needs a value` };
      opts[a === "-k" || a === "--top-k" ? "topK" : "repo"] = args[++i];
    } else if (a === "--json") opts.json = true;
    else if (a.startsWith("-") && a.length > 1 && !/^-\d/.test(a)) return { error: `unknown option ${a}` };
    else words.push(a);
  }
  return { words, opts };
}

// dirBytes is the size of the files under dir (managed mode's data
// directory), 0 when unknown: doc-engine's storageBytes.
function dirBytes(dir) {
  if (!dir) return 0;
  let n = 0;
  const walk = (d) => {
    let ents = [];
    try { ents = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of ents) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) { try { n += fs.statSync(p).size; } catch { /* gone */ } }
    }
  };
  walk(dir);
  return n;
}

// reindex runs `knowhub reindex`: a replay of the indexed files, or with
// full a re-read of the plugin's repositories.
function reindex(cfg, full, json = false) {
  const bin = findKnowhub(cfg);
  if (!bin) return { ok: false, text: "docsearch index needs the knowhub binary (knowhubBin or PATH)" };
  if (full && !cfg.repositories.length) {
    return { ok: false, text: "docsearch index --full re-reads the repositories of the plugin config, and it lists none; a knowhub started with its own configuration re-reads them with `knowhub reindex --rescan --config <file>`" };
  }
  const args = ["reindex", "--wait", "1m"];
  if (json) args.push("--json");
  const f = full ? reposFile(cfg) : null;
  if (f) args.push("--rescan", "--openclaw", f.file);
  if (cfg.natsListen) args.push("--nats-url", `nats://${cfg.natsListen}`);
  // The managed knowhub's NATS server takes the token it keeps in its
  // data directory; the CLI reads it from there.
  if (cfg.dataDir) args.push("--data", cfg.dataDir);
  try {
    const r = spawnSync(bin, args, { encoding: "utf8", timeout: 90_000 });
    return { ok: r.status === 0, stdout: r.stdout ?? "", text: (r.stdout + r.stderr).trim() || `knowhub reindex exited ${r.status}` };
  } finally {
    f?.remove();
  }
}

// Offline: writes knowhub cannot be reached for wait in a queue in the
// gateway's state directory and are replayed in order; searches answer
// "knowhub unreachable" with what they found before, marked as cached.
function offline(api, client, logger) {
  if (!state.queue) {
    const dir = join(stateDirOf(api, process.env, homedir()), "knowhub");
    state.queue = new OfflineQueue(join(dir, "offline-queue.json"), { fs });
    state.cache = new ResultCache(join(dir, "search-cache.json"), { fs });
  }
  const queue = state.queue, cache = state.cache;
  // saveKB posts a save in org:openclaw; a token that does not hold that
  // scope saves with its own scopes instead.
  const saveKB = async (body) => {
    const r = await client.call("POST", "/api/knowledge", { body });
    if (!r.ok && r.status === 403 && /not granted/.test(r.error) && body.scopes) {
      const { scopes, ...rest } = body;
      return client.call("POST", "/api/knowledge", { body: rest });
    }
    return r;
  };
  const send = (item) => item.kind === "kb_save" ? saveKB(item.body) : client.call(item.method, item.path, { query: item.query, body: item.body });
  const replay = () => queue.size ? queue.replay(send, {
    onSent: (item) => logger?.info?.(`knowhub: replayed a queued ${item.kind} from ${item.queued_at}`),
    onRejected: (item, r) => logger?.warn?.(`knowhub: a queued ${item.kind} from ${item.queued_at} was refused and dropped: ${r.error}`),
  }) : Promise.resolve({ sent: 0, left: 0 });
  // retry replays every 30 s while something waits (the timer does not
  // keep the process alive).
  const retry = () => {
    if (state.timer || !queue.size) return;
    state.timer = setInterval(() => {
      replay().then((r) => { if (!r.left) { clearInterval(state.timer); state.timer = null; } });
    }, 30_000);
    state.timer.unref?.();
  };
  // write sends one write behind whatever waits; when knowhub cannot be
  // reached it is queued: {ok:false, queued:n, error}.
  const write = async (item, { queueOnTimeout = true } = {}) => {
    if (queue.size) await replay();
    if (!queue.size) {
      const r = await send(item);
      if (r.ok || !r.unreachable || (r.timedOut && !queueOnTimeout)) return r;
      item = { ...item, error: r.error };
    }
    const n = queue.push(item);
    retry();
    return { ok: false, unreachable: true, queued: n, error: item.error ?? `knowhub is not reachable at ${client.base} (earlier writes are still waiting)` };
  };
  // search calls knowhub, remembers the answer, and answers from what it
  // remembers when knowhub is unreachable ({cached: {at}}).
  const search = async (kind, path, query) => {
    // Waiting writes first, so that a search finds what was saved offline.
    const rp = queue.size ? await replay() : null;
    const r = rp?.error ? { ok: false, unreachable: true, error: rp.error } : await client.call("GET", path, { query });
    if (r.ok) {
      cache.put(kind, query, r.body);
      return r;
    }
    if (!r.unreachable) return r;
    const c = cache.get(kind, query);
    return c ? { ...r, cached: c } : r;
  };
  return { write, search, replay, queue };
}

// unreachableText is a search's answer while knowhub is down: the error,
// and the cached answer when there is one, marked as such.
function unreachableText(what, r, render) {
  const head = `${what}: knowhub unreachable: ${r.error}`;
  if (!r.cached) return text(head, { error: r.error, status: 0, unreachable: true });
  return text(`${head}\n\nCACHED results from ${r.cached.at} (knowhub was not asked; they may be out of date):\n\n${render(r.cached.body)}`,
    { error: r.error, status: 0, unreachable: true, cached_at: r.cached.at });
}

const queuedText = (what, r) => text(`${what}: knowhub unreachable (${r.error}). Kept in the gateway's offline queue (${r.queued} waiting); it is sent, in order, when knowhub is back.`,
  { error: r.error, status: 0, unreachable: true, queued: r.queued });

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
    const off = offline(api, client, logger);
    const doc = docEngineNotice(api.config);
    if (doc) warnOnce(logger, "doc-engine", doc);
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
          const r = await docsSearch(client, cfg, { query: p.query, topK: p.topK, repo: p.repoFilter ?? p.repo }, off);
          if (!r.ok && r.unreachable) return unreachableText("semantic_doc_search", r, (b) => formatDocs(p.query, b));
          if (!r.ok) return failed("semantic_doc_search", r);
          if (cfg.docsOutput === "doc-engine") {
            const results = docEngineResults(r.body);
            return text(JSON.stringify(results, null, 2), { results });
          }
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
            types: { type: "array", items: { type: "string", enum: KB_TYPES_ACCEPTED } },
          },
        },
        async execute(_id, p) {
          const r = await off.search("kb", "/api/knowledge/search",
            { q: p.query, top_k: p.top_k ?? cfg.kbTopK, min_score: p.min_score ?? 3, types: normalizeTypes(p.types ?? []).join(","), format: "prompt" });
          if (!r.ok && r.unreachable) return unreachableText("kb_search", r, (b) => formatKB(p.query, b));
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
            types: { type: "array", minItems: 1, items: { type: "string", enum: KB_TYPES_ACCEPTED }, description: "best-practice is saved as strategy, solution as usecase" },
            score: { type: "integer", minimum: 1, maximum: 5, description: "how sure you are (default 3)" },
            source_name: { type: "string" },
            source_urls: { type: "array", items: { type: "string" } },
          },
        },
        async execute(_id, p) {
          p = { ...p, types: normalizeTypes(p.types) };
          const errs = validateSave(p);
          if (errs.length) return text(`kb_save: not saved: ${errs.join("; ")}`, { error: errs.join("; ") });
          // The KnowHub design's contract: scope org:openclaw, owner agent:<id>.
          const body = {
            task: p.task, content: p.content, types: p.types, score: p.score,
            scopes: [KB_SCOPE],
            owner: ctx?.agentId ? `agent:${ctx.agentId}` : cfg.submittedBy || undefined,
            source: {
              name: p.source_name || "openclaw", urls: p.source_urls, agent_id: ctx?.agentId,
              submitted_by: cfg.submittedBy || undefined, message_id: ctx?.sessionKey || ctx?.sessionId || undefined,
            },
          };
          const r = await off.write({ kind: "kb_save", method: "POST", path: "/api/knowledge", body });
          if (r.queued) return queuedText("kb_save", r);
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
          // A feedback that timed out may have been counted: not queued.
          const r = await off.write({ kind: "kb_update", method: "PUT", path: `/api/knowledge/${encodeURIComponent(p.knowledge_id)}`, body }, { queueOnTimeout: false });
          if (r.queued) return queuedText("kb_update", r);
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
      const id = sessionOf(ctx, event);
      const t = reminders.promptText(id);
      const slot = reminders.slot(id);
      if (!t && !slot) return undefined;
      return { ...(t ? { prependSystemContext: t } : {}), ...(slot ? { appendContext: slot } : {}) };
    });
    // The slot becomes the reminder on every Nth model call (Reminders.slot):
    // OpenClaw runs a plugin's input text transforms on each model request.
    // The replacement is a function, which String.prototype.replace calls
    // per match (the slot names its session); a slot that cannot be read
    // becomes nothing.
    // OpenClaw's type says `to: string`: were it ever turned into one, the
    // slot becomes nothing (toString) and the tool-result fallback stays on.
    const fill = (_m, id) => { try { return reminders.perCall(decodeURIComponent(id)); } catch { return ""; } };
    fill.toString = () => "";
    api.registerTextTransforms?.({ input: [{ from: REMINDER_SLOT_RE, to: fill }] });
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
      const p = (async () => {
        if (off.queue.size) await off.replay();
        if (off.queue.size) return { ok: false, unreachable: true, error: "earlier writes are still waiting" };
        return client.call("POST", "/api/extract", { query: { wait: "3s" }, body, timeoutMs: 4500 });
      })().then((r) => {
        if (!r.ok && r.unreachable) {
          const n = off.queue.push({ kind: "transcript", method: "POST", path: "/api/extract", body, error: r.error });
          logger?.warn?.(`knowhub: transcript upload: knowhub unreachable (${r.error}); kept in the offline queue (${n} waiting)`);
        } else if (!r.ok) logger?.warn?.(`knowhub: transcript upload failed: ${r.error}`);
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
      const searchAction = async (words, opts) => {
          const q = words.join(" ");
          const r = await docsSearch(client, cfg, { query: q, topK: Number(opts.topK), repo: opts.repo });
          if (!r.ok) { console.error(`docsearch: ${r.error}`); process.exitCode = 1; return; }
          if (opts.json) printJSON(r.body); else console.log(formatDocs(q, r.body));
      };
      // `openclaw docsearch <query>` is `openclaw docsearch search <query>`,
      // as with doc-engine (the parent's own argument and action).
      ds.command("search <query...>").description("Search the docs (also `docsearch <query>`)")
        .option("-k, --top-k <n>", "number of results", String(cfg.topK))
        .option("-r, --repo <name>", "only this repository")
        .option("--json", "print knowhub's JSON reply")
        .action(searchAction);
      // Its options are read here: options of the parent command would
      // take those of the subcommands (`docsearch status --json`).
      ds.argument("[query...]", "the same as `docsearch search <query>` (with -k, -r, --json)")
        .allowUnknownOption()
        .action(async (args) => {
          const { words, opts, error } = shorthandArgs(args ?? [], cfg.topK);
          if (error) { console.error(`docsearch: ${error}`); process.exitCode = 1; return; }
          if (!words.length) { ds.help(); return; }
          await searchAction(words, opts);
        });
      ds.command("index").description("Rebuild the index (--full re-reads the repositories)")
        .option("--full", "re-read the repositories")
        .option("--json", "doc-engine's fields (totalChunks, totalFiles, repos, storageBytes) after the reindex, knowhub's summary under reindex")
        .action(async (opts) => {
          const r = reindex(cfg, !!opts.full, !!opts.json);
          if (opts.json && r.ok) {
            let summary = {};
            try { summary = JSON.parse(r.stdout); } catch { summary = { output: r.text }; }
            const st = await client.call("GET", "/api/stats");
            printJSON({ ...(st.ok ? docEngineStats(st.body, dirBytes(cfg.dataDir)) : { error: st.error }), reindex: summary });
            return;
          }
          (r.ok ? console.log : console.error)(r.text);
          if (!r.ok) process.exitCode = 1;
        });
      ds.command("status").description("Index statistics")
        .option("--json", "doc-engine's fields: totalChunks, totalFiles, repos{files, chunks}, storageBytes (knowhub's own under knowhub)")
        .action(async (opts) => {
          const r = await client.call("GET", "/api/stats");
          if (doc) console.error(doc);
          if (!r.ok) { console.error(`docsearch: ${r.error}`); process.exitCode = 1; return; }
          if (opts.json) { printJSON(docEngineStats(r.body, dirBytes(cfg.dataDir))); return; }
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
      start: () => { startManaged(cfg, logger); if (off.queue.size) off.replay(); },
      stop: () => stopManaged(),
    });
  },
};
