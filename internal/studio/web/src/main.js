// connectd studio: the page. Files (open, save with conflict check), the
// editor, and the panes: form, graph, catalog, try it.

import { api, el, debounce } from "./api.js";
import { loadSchema } from "./schema.js";
import { createEditor, jumpTo, setExtraDiagnostics, setBufferKind, lastLint, lintDelay } from "./editor.js";
import { renderForm } from "./form.js";
import { renderGraph, redrawLinks } from "./graph.js";
import { renderCatalog, catalogDiagnostics } from "./catalog.js";
import { createTryIt } from "./tryit.js";

const $ = (s) => document.querySelector(s);

const state = { path: null, version: "", saved: "", roots: [] };
let view;

function text() {
  return view.state.doc.toString();
}

function setStatus(msg, cls) {
  const s = $("#status");
  s.textContent = msg;
  s.className = cls || "";
}

function markDirty() {
  const dirty = state.path && text() !== state.saved;
  $("#save").disabled = !state.path;
  $("#dirty").textContent = dirty ? "●" : "";
  document.title = (dirty ? "● " : "") + (state.path ? shortName(state.path) + " — " : "") + "connectd studio";
}

function shortName(p) {
  for (const r of state.roots) if (p.startsWith(r + "/")) return (state.roots.length > 1 ? r.split("/").pop() + "/" : "") + p.slice(r.length + 1);
  return p;
}

// confirmDialog asks in a dialog of the page (not window.confirm): the
// choice names what happens.
function confirmDialog(message, yes, alt) {
  return new Promise((resolve) => {
    const d = $("#dialog");
    $("#dialog-text").textContent = message;
    const buttons = $("#dialog-buttons");
    const done = (v) => {
      d.close();
      resolve(v);
    };
    buttons.replaceChildren(
      el("button", { class: "dialog-yes", onclick: () => done(true) }, yes),
      alt ? el("button", { class: "dialog-alt", onclick: () => done("alt") }, alt) : null,
      el("button", { class: "dialog-cancel", onclick: () => done(false) }, "Cancel"));
    d.showModal();
  });
}

async function openFile(path) {
  if (state.path && text() !== state.saved) {
    const ok = await confirmDialog(`${shortName(state.path)} has unsaved changes. Open ${shortName(path)} and drop them?`, "Drop changes");
    if (!ok) {
      $("#files").value = state.path;
      return;
    }
  }
  const r = await api("GET", "/api/file?path=" + encodeURIComponent(path));
  if (!r.ok) {
    setStatus(r.data.error || `open: ${r.status}`, "error");
    return;
  }
  state.path = r.data.path;
  state.version = r.data.version;
  setBufferKind(state.path);
  state.saved = r.data.content;
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: r.data.content }, selection: { anchor: 0 } });
  $("#files").value = state.path;
  setStatus(`opened ${shortName(state.path)}`);
  markDirty();
  refreshPanes();
}

async function save(force) {
  if (!state.path) return;
  const content = text();
  const r = await api("PUT", "/api/file", { path: state.path, content, version: state.version, force: !!force });
  if (r.status === 409) {
    const choice = await confirmDialog(`${shortName(state.path)} changed on disk since it was loaded. Overwrite it with the editor's text, or reload it from disk (dropping the editor's changes)?`, "Overwrite", "Reload from disk");
    if (choice === true) return save(true);
    if (choice === "alt") {
      state.saved = "";
      const p = state.path;
      state.path = null;
      return openFile(p);
    }
    setStatus("not saved: the file changed on disk", "error");
    return;
  }
  if (!r.ok) {
    setStatus("save failed: " + (r.data.error || r.status), "error");
    return;
  }
  state.version = r.data.version;
  state.saved = content;
  setStatus(`saved ${shortName(state.path)}`, "ok");
  markDirty();
}

// ---- panes ----
//
// The panes follow the buffer after the lint has had its turn (editor.js
// lintDelay, 100ms): the form after 250ms of quiet, the graph after 350ms,
// the catalog after 400ms, so that none of them delays the diagnostics.

function onJump(start, end) {
  jumpTo(view, start, end);
}

let graphSeq = 0;
const refreshGraph = debounce(async () => {
  const seq = ++graphSeq;
  const r = await api("POST", "/api/graph", { yaml: text() });
  if (seq !== graphSeq) return;
  if (r.status === 404) {
    $("#graph").replaceChildren(el("p", { class: "muted", text: "The graph API is not in this build." }));
    return;
  }
  renderGraph($("#graph"), r.ok ? r.data : { nodes: [], errors: [{ message: (r.data && r.data.error) || String(r.status) }] }, onJump);
  $("#graph").dataset.seq = String(seq);
}, 350);

let catalogSeq = 0;
const refreshCatalog = debounce(async () => {
  const seq = ++catalogSeq;
  const r = await api("POST", "/api/catalog", { yaml: text() });
  if (seq !== catalogSeq) return;
  if (r.status === 404) {
    $("#catalog").replaceChildren(el("p", { class: "muted", text: "The catalog API is not in this build." }));
    return;
  }
  const cat = r.ok ? r.data : { tables: [], errors: [{ message: (r.data && r.data.error) || String(r.status) }] };
  renderCatalog($("#catalog"), cat, onJump);
  setExtraDiagnostics(view, catalogDiagnostics(cat));
}, 400);

const refreshForm = debounce(() => {
  renderForm($("#form"), text, view.state.selection.main.head, (next) => {
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: next }, selection: { anchor: Math.min(view.state.selection.main.head, next.length) } });
  });
}, 250);

function refreshPanes() {
  refreshGraph();
  refreshCatalog();
  refreshForm();
}

function showTab(name) {
  for (const b of document.querySelectorAll(".tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const p of document.querySelectorAll(".pane")) p.hidden = p.id !== name;
  if (name === "graph") redrawLinks($("#graph"));
}

async function main() {
  view = createEditor($("#editor"), (u) => {
    if (u.docChanged) {
      markDirty();
      refreshGraph();
      refreshCatalog();
    }
    refreshForm();
  });
  $("#save").addEventListener("click", () => save(false));
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "s") {
      e.preventDefault();
      save(false);
    }
  });
  window.addEventListener("beforeunload", (e) => {
    if (state.path && text() !== state.saved) e.preventDefault();
  });
  for (const b of document.querySelectorAll(".tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));
  $("#files").addEventListener("change", (e) => openFile(e.target.value));
  window.addEventListener("resize", debounce(() => redrawLinks($("#graph")), 100));
  createTryIt($("#tryit"), text, confirmDialog);
  showTab("form");

  const [files] = await Promise.all([api("GET", "/api/files"), loadSchema().catch((e) => setStatus(String(e), "error"))]);
  if (!files.ok) {
    setStatus(files.data.error || "listing files failed", "error");
    return;
  }
  state.roots = files.data.roots;
  $("#roots").textContent = files.data.roots.join(", ");
  const sel = $("#files");
  sel.replaceChildren(...files.data.files.map((f) => el("option", { value: f, text: shortName(f) })));
  const first = files.data.open[0] || files.data.files[0];
  if (first) await openFile(first);
  document.body.dataset.ready = "true";
}

// For the browser tests and the curious: the editor and the last lint.
window.studio = {
  get view() { return view; },
  get lastLint() { return lastLint; },
  lintDelay,
  state,
  openFile,
  save,
};

main();
