// knowhub search page: plain JavaScript against the HTTP API.
"use strict";

const $ = (id) => document.getElementById(id);
let tab = "docs";

function token() {
  return sessionStorage.getItem("knowhub-token") || "";
}

async function api(method, path) {
  const headers = { "Accept": "application/json" };
  const t = token();
  if (t) headers["Authorization"] = "Bearer " + t;
  const resp = await fetch(path, { method, headers });
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

function setTab(name) {
  tab = name;
  for (const b of document.querySelectorAll("#tabs button")) {
    b.setAttribute("aria-selected", String(b.dataset.tab === name));
  }
  for (const f of document.querySelectorAll("#filters .filter")) {
    f.hidden = f.dataset.for !== name;
  }
  search();
}

function docHit(h) {
  return el("li", { class: "hit doc" },
    el("div", { class: "where" },
      el("span", { class: "repo" }, h.repo),
      el("span", { class: "path" }, h.path),
      h.repo_type ? el("span", { class: "badge" }, h.repo_type + " · priority " + h.priority) : null),
    (h.heading_path && h.heading_path.length)
      ? el("div", { class: "heading" }, h.heading_path.join(" › ")) : null,
    marked(h.snippet));
}

function shadowedHit(h) {
  return el("li", { class: "hit shadow" },
    el("div", { class: "where" },
      el("span", { class: "repo" }, h.repo),
      el("span", { class: "path" }, h.path)),
    (h.heading_path && h.heading_path.length)
      ? el("div", { class: "heading" }, h.heading_path.join(" › ")) : null,
    el("div", { class: "reason" }, "shadowed by " + h.shadowed_by + " (" + h.reason + ")"),
    marked(h.snippet));
}

function toolHit(h) {
  return el("li", { class: "hit tool" },
    el("div", { class: "where" },
      el("span", { class: "repo" }, h.name),
      h.type ? el("span", { class: "badge" }, h.type + (h.instance ? " · " + h.instance : "")) : null,
      h.match ? el("span", { class: "badge" }, h.match) : null),
    el("div", { class: "desc" }, h.description || ""));
}

function kbHit(h) {
  return el("li", { class: "hit kb" },
    el("div", { class: "where" },
      el("span", { class: "repo" }, h.task || h.id),
      el("span", { class: "badge" }, (h.types || []).join(", ")),
      el("span", { class: "badge" }, "quality " + (h.quality_score || 0).toFixed(2))),
    el("div", { class: "desc" }, h.content));
}

// partial is the note shown beside results from an index still being built.
function partial(r) {
  return r.indexing ? " · still indexing: results may be incomplete" : "";
}

async function search() {
  const q = $("q").value.trim();
  const results = $("results");
  const shadowed = $("shadowed");
  results.replaceChildren();
  shadowed.replaceChildren();
  $("shadowed-box").hidden = true;
  showError("");
  if (!q) {
    $("summary").textContent = "";
    return;
  }
  const p = new URLSearchParams({ q });
  try {
    if (tab === "docs") {
      const repo = $("repo-filter").value;
      if (repo) p.set("repo", repo);
      const r = await api("GET", "/api/docs/search?" + p);
      $("summary").textContent = r.hits.length + " of " + r.total + " sections · " + r.took_us + " µs" + partial(r);
      results.append(...r.hits.map(docHit));
      if (r.shadowed && r.shadowed.length) {
        shadowed.append(...r.shadowed.map(shadowedHit));
        $("shadowed-box").hidden = false;
      }
    } else if (tab === "tools") {
      const r = await api("GET", "/api/tools/search?" + p);
      $("summary").textContent = r.hits.length + " of " + r.total + " tools" + partial(r);
      results.append(...r.hits.map(toolHit));
    } else {
      const type = $("type-filter").value;
      if (type) p.set("types", type);
      const r = await api("GET", "/api/knowledge/search?" + p);
      $("summary").textContent = r.count + " of " + r.total + " entries" + partial(r);
      results.append(...r.results.map(kbHit));
    }
    if (!results.children.length) results.append(el("li", { class: "none" }, "No hits."));
  } catch (e) {
    $("summary").textContent = "";
    showError(e.message);
  }
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
      el("div", { class: "reason" }, "held back: " + (e.quarantine_reason || "")),
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
  if (tab === "knowledge") search();
}

document.addEventListener("DOMContentLoaded", () => {
  $("token").value = token();
  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem("knowhub-token", $("token").value.trim());
    loadStatus();
    loadReview();
    search();
  });
  $("search-form").addEventListener("submit", (ev) => { ev.preventDefault(); search(); });
  for (const b of document.querySelectorAll("#tabs button")) {
    b.addEventListener("click", () => setTab(b.dataset.tab));
  }
  $("repo-filter").addEventListener("change", search);
  $("type-filter").addEventListener("change", search);
  $("status-refresh").addEventListener("click", loadStatus);
  loadStatus();
  loadReview();
});
