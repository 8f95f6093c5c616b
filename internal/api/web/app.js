// knowhub search page: plain JavaScript against the HTTP API.
"use strict";

const $ = (id) => document.getElementById(id);

// The search a page shows is all in its URL (?q=&tab=&repo=&type=&ttype=&instance=),
// so that it can be bookmarked, shared and walked with back and forward.
const fields = { q: "q", repo: "repo-filter", type: "type-filter", ttype: "tool-type-filter", instance: "instance-filter" };
const tabs = ["docs", "tools", "knowledge"];
let tab = "docs";

// Only the latest search may render: each one takes the next generation
// and aborts the one before it.
let generation = 0;
let inflight = null;
let typing = null;
const instances = new Set();

function token() {
  return sessionStorage.getItem("knowhub-token") || "";
}

async function api(method, path, signal) {
  const headers = { "Accept": "application/json" };
  const t = token();
  if (t) headers["Authorization"] = "Bearer " + t;
  const resp = await fetch(path, { method, headers, signal });
  let body = null;
  try { body = await resp.json(); } catch (e) { body = null; }
  if (!resp.ok) {
    const err = new Error((body && body.error) || resp.status + " " + resp.statusText);
    err.status = resp.status;
    throw err;
  }
  return body;
}

function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") n.className = v; else n.setAttribute(k, v);
  }
  for (const c of children) {
    if (c == null) continue;
    n.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return n;
}

// marked renders a snippet whose matched words come as **word**, without
// ever interpreting the text as HTML.
function marked(text) {
  const out = el("span", { class: "snippet" });
  (text || "").split("**").forEach((part, i) => {
    if (part === "") return;
    out.append(i % 2 === 1 ? el("mark", {}, part) : document.createTextNode(part));
  });
  return out;
}

function showError(msg) {
  const e = $("error");
  e.textContent = msg || "";
  e.hidden = !msg;
}

function plural(n, one, many) {
  return n + " " + (n === 1 ? one : many);
}

// state reads the search from the form; applyState puts one in it.
function state() {
  const s = { tab };
  for (const [k, id] of Object.entries(fields)) {
    const v = $(id).value.trim();
    if (v) s[k] = v;
  }
  return s;
}

function applyState(s) {
  tab = tabs.includes(s.tab) ? s.tab : "docs";
  for (const [k, id] of Object.entries(fields)) {
    const input = $(id);
    if (input.tagName === "SELECT" && s[k] && ![...input.options].some((o) => o.value === s[k])) {
      input.append(el("option", { value: s[k] }, s[k])); // a value the lists have not loaded yet
    }
    input.value = s[k] || "";
  }
  showTab();
}

function stateFromURL() {
  const p = new URLSearchParams(location.search);
  const s = {};
  for (const k of ["tab", ...Object.keys(fields)]) if (p.get(k)) s[k] = p.get(k);
  return s;
}

function urlOf(s) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(s)) if (v && !(k === "tab" && v === "docs")) p.set(k, v);
  const qs = p.toString();
  return location.pathname + (qs ? "?" + qs : "");
}

// remember writes the search into the URL: a new history entry for a
// search the user asked for, the same entry while they type.
function remember(push) {
  const s = state();
  const url = urlOf(s);
  if (url === location.pathname + location.search) return;
  if (push) history.pushState(s, "", url); else history.replaceState(s, "", url);
}

function showTab() {
  for (const b of document.querySelectorAll("#tabs button")) {
    b.setAttribute("aria-selected", String(b.dataset.tab === tab));
  }
  for (const f of document.querySelectorAll("#filters .filter")) {
    f.hidden = f.dataset.for !== tab;
  }
}

function setTab(name) {
  tab = name;
  showTab();
  search(true);
}

// expander adds a button that shows (and hides) more of a hit: load
// returns the nodes to show, once.
function expander(item, label, load) {
  const more = el("div", { class: "more", hidden: "" });
  const btn = el("button", { type: "button", class: "expand", "aria-expanded": "false" }, label);
  let loaded = false;
  const toggle = async () => {
    const open = more.hidden;
    if (open && !loaded) {
      try {
        more.replaceChildren(...await load());
      } catch (e) {
        more.replaceChildren(el("p", { class: "warn" }, e.message));
      }
      loaded = true;
    }
    more.hidden = !open;
    btn.setAttribute("aria-expanded", String(open));
  };
  btn.addEventListener("click", (ev) => { ev.stopPropagation(); toggle(); });
  item.toggle = toggle;
  item.append(btn, more);
}

function section(h) {
  const item = el("div", { class: "section focusable", tabindex: "0" },
    (h.heading_path && h.heading_path.length)
      ? el("div", { class: "heading" }, h.heading_path.join(" › ")) : null,
    marked(h.snippet));
  if (h.content) {
    expander(item, "Show section", async () => [
      el("pre", { class: "content" }, h.content + (h.content_truncated ? " …" : ""))]);
  }
  return item;
}

// docPages groups the hits by page, in the order of each page's best hit,
// so that a page with many matching sections is one card.
function docPages(hits) {
  const pages = new Map();
  for (const h of hits) {
    const key = h.repo + "\u0000" + h.path;
    if (!pages.has(key)) pages.set(key, []);
    pages.get(key).push(h);
  }
  return [...pages.values()].map((secs) => {
    const h = secs[0];
    return el("li", { class: "hit doc page" },
      el("div", { class: "where" },
        el("span", { class: "repo" }, h.repo),
        el("span", { class: "path" }, h.path),
        h.repo_type ? el("span", { class: "badge" }, h.repo_type + " · priority " + h.priority) : null,
        secs.length > 1 ? el("span", { class: "badge" }, plural(secs.length, "section", "sections")) : null),
      ...secs.map(section));
  });
}

function shadowedHit(h) {
  const by = (h.shadowed_by || "").split("#")[0];
  return el("li", { class: "hit shadow" },
    el("div", { class: "where" },
      el("span", { class: "repo" }, h.repo),
      el("span", { class: "path" }, h.path)),
    (h.heading_path && h.heading_path.length)
      ? el("div", { class: "heading" }, h.heading_path.join(" › ")) : null,
    el("div", { class: "reason" }, "shadowed by " + by + " (" + h.reason + ")"),
    marked(h.snippet));
}

function toolHit(h) {
  const item = el("li", { class: "hit tool focusable", tabindex: "0" },
    el("div", { class: "where" },
      el("span", { class: "repo" }, h.name),
      h.type ? el("span", { class: "badge" }, h.type + (h.instance ? " · " + h.instance : "")) : null,
      h.match ? el("span", { class: "badge match" }, h.match) : null),
    el("div", { class: "desc" }, h.description || ""));
  if (h.input_schema) {
    expander(item, "Show input schema", async () => [
      el("pre", { class: "content" }, JSON.stringify(h.input_schema, null, 2))]);
  }
  return item;
}

function kbHit(h) {
  return el("li", { class: "hit kb focusable", tabindex: "0" },
    el("div", { class: "where" },
      el("span", { class: "repo" }, h.task || h.id),
      el("span", { class: "badge" }, (h.types || []).join(", ")),
      el("span", { class: "badge" }, "quality " + (h.quality_score || 0).toFixed(2))),
    el("div", { class: "desc" }, h.content));
}

function noteInstances(hits) {
  const sel = $("instance-filter");
  let added = false;
  for (const h of hits) {
    if (h.instance && !instances.has(h.instance)) {
      instances.add(h.instance);
      added = true;
    }
  }
  if (!added) return;
  const chosen = sel.value;
  sel.replaceChildren(el("option", { value: "" }, "all"),
    ...[...instances].sort().map((i) => el("option", { value: i }, i)));
  sel.value = chosen;
}

// search runs the form's search; push makes it a new history entry.
async function search(push) {
  clearTimeout(typing);
  const gen = ++generation;
  if (inflight) inflight.abort();
  const ctrl = new AbortController();
  inflight = ctrl;
  if (push !== null) remember(push);
  const q = $("q").value.trim();
  showError("");
  if (!q) {
    $("summary").textContent = "";
    $("results").replaceChildren();
    $("shadowed").replaceChildren();
    $("shadowed-box").hidden = true;
    return;
  }
  const p = new URLSearchParams({ q });
  const nodes = [], shadow = [];
  let summary = "";
  let indexing = false;
  try {
    if (tab === "docs") {
      if ($("repo-filter").value) p.set("repo", $("repo-filter").value);
      p.set("content", "1");
      const r = await api("GET", "/api/docs/search?" + p, ctrl.signal);
      const pages = docPages(r.hits);
      summary = r.hits.length + " of " + plural(r.total, "section", "sections") + " in " + plural(pages.length, "page", "pages") + " · " + r.took_us + " µs";
      nodes.push(...pages);
      shadow.push(...(r.shadowed || []).map(shadowedHit));
      indexing = !!r.indexing;
    } else if (tab === "tools") {
      if ($("tool-type-filter").value) p.set("type", $("tool-type-filter").value);
      if ($("instance-filter").value) p.set("instance", $("instance-filter").value);
      p.set("detail", "full");
      const r = await api("GET", "/api/tools/search?" + p, ctrl.signal);
      summary = r.hits.length + " of " + plural(r.total, "tool", "tools");
      nodes.push(...r.hits.map(toolHit));
      noteInstances(r.hits);
      indexing = !!r.indexing;
    } else {
      if ($("type-filter").value) p.set("types", $("type-filter").value);
      const r = await api("GET", "/api/knowledge/search?" + p, ctrl.signal);
      summary = r.count + " of " + plural(r.total, "entry", "entries");
      nodes.push(...r.results.map(kbHit));
      indexing = !!r.indexing;
    }
  } catch (e) {
    if (gen !== generation) return; // a newer search replaced this one
    $("summary").textContent = "";
    $("results").replaceChildren();
    showError(e.message);
    return;
  }
  if (gen !== generation) return;
  inflight = null;
  if (!nodes.length) nodes.push(el("li", { class: "none" }, "No hits."));
  if (indexing) summary += " · still indexing: results may be incomplete";
  $("summary").textContent = summary;
  $("results").replaceChildren(...nodes);
  $("results").dataset.q = q; // which search the list shows
  $("shadowed").replaceChildren(...shadow);
  $("shadowed-box").hidden = !shadow.length;
}

function table(head, rows) {
  return el("table", {},
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", {}, c))))));
}

async function loadStatus() {
  const body = $("status-body");
  try {
    const s = await api("GET", "/api/status");
    const repos = s.repos || [];
    const sel = $("repo-filter");
    const chosen = sel.value;
    sel.replaceChildren(el("option", { value: "" }, "all"),
      ...repos.map((r) => el("option", { value: r.repo }, r.repo)));
    if (chosen && !repos.some((r) => r.repo === chosen)) sel.append(el("option", { value: chosen }, chosen));
    sel.value = chosen;
    const parts = [
      el("p", { id: "status-ready", class: s.ready && !s.problem && !s.indexing ? "ok" : "warn" },
        !s.ready ? "loading" : s.indexing ? "still indexing: results may be incomplete" : "ready",
        s.problem ? " · " + s.problem : "", s.integrity ? " · " + s.integrity : ""),
      table(["repository", "files", "sections"], repos.map((r) => [r.repo, r.files, r.chunks])),
      table(["collection", "sources", "sections", "terms"],
        Object.entries(s.collections || {}).map(([n, c]) => [n, c.sources, c.chunks, c.terms])),
    ];
    if (s.pipeline) {
      parts.push(table(["stage", "stream seq", "done to", "pending", "dead"],
        s.pipeline.stages.map((st) => [st.stage, st.stream_last_seq, st.ack_floor,
          st.pending + st.ack_pending, st.dead_letters])));
      parts.push(el("p", { id: "dead-letters", class: s.pipeline.dead_letters ? "warn" : "" },
        "dead letters: " + s.pipeline.dead_letters + " · index revision " + s.pipeline.index_revision));
    } else if (s.pipeline_error) {
      parts.push(el("p", { class: "warn" }, "pipeline: " + s.pipeline_error));
    }
    body.replaceChildren(...parts);
  } catch (e) {
    body.replaceChildren(el("p", { class: "warn" }, e.message));
  }
}

async function loadReview() {
  const box = $("review");
  const list = $("review-list");
  let r;
  try {
    r = await api("GET", "/api/knowledge/review");
  } catch (e) {
    // Only an admin token may review; others do not see the panel.
    box.hidden = true;
    return;
  }
  box.hidden = false;
  list.replaceChildren();
  if (!r.entries.length) {
    list.append(el("li", { class: "none" }, "Nothing in quarantine."));
    return;
  }
  for (const e of r.entries) {
    const release = el("button", { type: "button", class: "release", "data-id": e.id }, "Release");
    const revoke = el("button", { type: "button", class: "revoke", "data-id": e.id }, "Revoke");
    release.addEventListener("click", () => moderate(e.id, "release"));
    revoke.addEventListener("click", () => moderate(e.id, "revoke"));
    list.append(el("li", { class: "entry", "data-id": e.id },
      el("div", { class: "where" }, el("span", { class: "repo" }, e.task || e.id),
        el("span", { class: "badge" }, (e.types || []).join(", "))),
      el("div", { class: "desc" }, e.content),
      el("div", { class: "reason" }, (e.state === "retired" ? "retired: " : "held back: ") + (e.quarantine_reason || e.state_reason || "")),
      el("div", { class: "actions" }, release, revoke)));
  }
}

async function moderate(id, action) {
  try {
    await api("POST", "/api/knowledge/" + encodeURIComponent(id) + "/" + action);
    showError("");
  } catch (e) {
    showError(action + " " + id + ": " + e.message);
  }
  await loadReview();
  if (tab === "knowledge") search(null);
}

// Keyboard: "/" focuses the search box, the arrows move through the hits,
// Enter opens the focused one, Escape goes back to the box.
function onKey(ev) {
  const t = ev.target;
  const typingIn = t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement;
  if (ev.key === "/" && !typingIn) {
    ev.preventDefault();
    $("q").focus();
    $("q").select();
    return;
  }
  const items = [...document.querySelectorAll("#results .focusable")];
  if (!items.length) return;
  const at = items.indexOf(t.closest ? t.closest(".focusable") : null);
  if (ev.key === "ArrowDown" && (t === $("q") || at >= 0)) {
    ev.preventDefault();
    items[Math.min(at + 1, items.length - 1)].focus();
  } else if (ev.key === "ArrowUp" && at >= 0) {
    ev.preventDefault();
    if (at === 0) $("q").focus(); else items[at - 1].focus();
  } else if (ev.key === "Enter" && at >= 0 && t === items[at] && items[at].toggle) {
    ev.preventDefault();
    items[at].toggle();
  } else if (ev.key === "Escape" && at >= 0) {
    $("q").focus();
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("token").value = token();
  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem("knowhub-token", $("token").value.trim());
    loadStatus();
    loadReview();
    search(null);
  });
  $("search-form").addEventListener("submit", (ev) => { ev.preventDefault(); search(true); });
  // Search as you type, once typing pauses; the URL follows without
  // a history entry per keystroke.
  $("q").addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => search(false), 250);
  });
  for (const b of document.querySelectorAll("#tabs button")) {
    b.addEventListener("click", () => setTab(b.dataset.tab));
  }
  for (const id of ["repo-filter", "type-filter", "tool-type-filter", "instance-filter"]) {
    $(id).addEventListener("change", () => search(true));
  }
  $("status-refresh").addEventListener("click", loadStatus);
  document.addEventListener("keydown", onKey);
  window.addEventListener("popstate", () => {
    applyState(stateFromURL());
    search(null);
  });
  applyState(stateFromURL());
  loadStatus();
  loadReview();
  if ($("q").value) search(null);
});
