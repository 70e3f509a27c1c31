// The YAML editor: CodeMirror 6 with completion and hover docs from the
// schema, and live diagnostics from POST /api/lint (the checks of
// `connectd lint`, same lines and columns).

import { EditorState, StateEffect, StateField } from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter,
  drawSelection, hoverTooltip, Decoration,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { syntaxHighlighting, defaultHighlightStyle, indentOnInput, bracketMatching, foldGutter, foldKeymap } from "@codemirror/language";
import { autocompletion, completionKeymap } from "@codemirror/autocomplete";
import { linter, lintGutter, setDiagnostics } from "@codemirror/lint";
import { searchKeymap, highlightSelectionMatches } from "@codemirror/search";
import { yaml } from "@codemirror/lang-yaml";

import { api, el } from "./api.js";
import { contextAt, keyAt, walk, child, deref, flinkOption, defaultText, typeText, schemaRoot } from "./schema.js";

// lintDelay: ms after the last keystroke before the buffer is linted.
export const lintDelay = 100;

// completionInteractionDelay: ms a completion list is shown before Enter
// accepts from it (CodeMirror's guard against accepting one by typing on).
export const completionInteractionDelay = 75;

// yamlBuffer: the buffer is a pipeline config (not a .sql file): lint,
// completion and hover apply.
let yamlBuffer = true;
export function setBufferKind(path) {
  yamlBuffer = !/\.sql$/i.test(path || "");
}

function lines(state) {
  return state.doc.toString().split("\n");
}

// complete offers the keys of the mapping the cursor is in (component
// names in a component slot, fields in a component) and, after `key: `,
// the values the field takes.
function complete(context) {
  if (!schemaRoot() || !yamlBuffer) return null;
  const line = context.state.doc.lineAt(context.pos);
  const col = context.pos - line.from;
  const c = contextAt(lines(context.state), line.number, col);
  const word = context.matchBefore(/[\w.$-]*/);
  if (!word || (word.from === word.to && !context.explicit && c.mode === "key" && !/^\s*(-\s+)*$/.test(line.text.slice(0, col)))) return null;
  if (c.mode === "value") {
    const s = child(walk(c.path).schema, c.key);
    if (!s) return null;
    const vals = new Set();
    (s.enum || []).forEach((v) => vals.add(String(v)));
    (s.examples || []).forEach((v) => typeof v !== "object" && vals.add(String(v)));
    if (s.type === "boolean") ["true", "false"].forEach((v) => vals.add(v));
    if (s.default !== undefined && typeof s.default !== "object") vals.add(String(s.default));
    if (!vals.size) return null;
    return {
      from: word.from,
      options: [...vals].map((v) => ({ label: v, type: "enum", detail: s.default === v ? "default" : "" })),
    };
  }
  const parent = walk(c.path).schema;
  const props = parent && deref(parent).properties;
  if (!props) return null;
  // Keys already set in this mapping are not offered again.
  const present = siblingKeys(context.state, line.number, c);
  const options = [];
  for (const [name, raw] of Object.entries(props)) {
    if (present.has(name)) continue;
    const s = deref(raw);
    const isComponent = s && s.defName && s.defName.includes(".");
    options.push({
      label: name,
      type: isComponent ? "class" : "property",
      detail: isComponent ? s.defName.split(".")[0] : typeText(s),
      info: () => docNode(name, s),
      apply: applyKey(s),
      boost: isComponent && name.startsWith("kafka_") ? 1 : 0,
    });
  }
  return { from: word.from, options, validFor: /^[\w.$-]*$/ };
}

// applyKey writes `key: ` for a scalar and `key:` + a new indented line
// for an object or list.
function applyKey(s) {
  return (view, completion, from, to) => {
    const line = view.state.doc.lineAt(from);
    const indent = from - line.from;
    let insert = completion.label + ": ";
    if (s && (s.properties || (s.type === "object" && !s.additionalProperties))) {
      insert = completion.label + ":\n" + " ".repeat(indent + 2);
    }
    view.dispatch({ changes: { from, to, insert }, selection: { anchor: from + insert.length } });
  };
}

function siblingKeys(state, lineNo, c) {
  const ls = lines(state);
  const mine = new Set();
  const depth = JSON.stringify(c.path);
  for (let n = 1; n <= ls.length; n++) {
    if (n === lineNo) continue;
    const t = ls[n - 1];
    const m = t.match(/^(\s*)((?:-\s+)*)([\w.-]+)\s*:(\s|$)/);
    if (!m) continue;
    const k = contextAt(ls, n, m[1].length + m[2].length);
    if (JSON.stringify(k.path) === depth && sameItem(ls, n, lineNo, m[1].length + m[2].length)) mine.add(m[3]);
  }
  return mine;
}

// sameItem: two lines with keys at one column belong to one mapping when
// no line between them is less indented than that column.
function sameItem(ls, a, b, col) {
  const [lo, hi] = a < b ? [a, b] : [b, a];
  for (let n = lo + 1; n < hi; n++) {
    const t = ls[n - 1];
    if (/^\s*(#.*)?$/.test(t)) continue;
    const ind = t.match(/^\s*/)[0].length;
    if (ind < col) return false;
    if (ind === col && /^\s*-/.test(t)) return false;
  }
  const t = ls[lo - 1];
  return !(t.match(/^\s*/)[0].length === col && /^\s*-/.test(ls[hi - 1]));
}

// docNode renders a field's docs: description, type, default, Flink option.
export function docNode(name, s) {
  const box = el("div", { class: "doc" });
  box.append(el("div", { class: "doc-title" }, el("b", { text: name }), s && typeText(s) ? el("span", { class: "doc-type", text: " " + typeText(s) }) : null));
  const d = (s && s.description) || "";
  if (d) box.append(el("div", { class: "doc-desc", text: d }));
  const def = defaultText(s);
  if (def !== "") box.append(el("div", { class: "doc-default" }, "Default: ", el("code", { text: def })));
  const flink = flinkOption(s);
  if (flink) box.append(el("div", { class: "doc-flink" }, "Flink: ", el("code", { text: flink.replace(/`/g, "") })));
  return box;
}

const hover = hoverTooltip((view, pos) => {
  if (!schemaRoot() || !yamlBuffer) return null;
  const line = view.state.doc.lineAt(pos);
  const k = keyAt(lines(view.state), line.number, pos - line.from);
  if (!k) return null;
  const parent = walk(k.path).schema;
  const s = child(parent, k.key);
  if (!s) return null;
  return {
    pos: line.from + k.from,
    end: line.from + k.to,
    above: true,
    create: () => ({ dom: docNode(k.key, s) }),
  };
});

// Extra diagnostics from other panes (the catalog's DDL errors), shown
// with the lint's last problems at once, and again by every lint after.
let extraDiagnostics = [];
export function setExtraDiagnostics(view, list) {
  if (JSON.stringify(list) === JSON.stringify(extraDiagnostics)) return;
  extraDiagnostics = list;
  if (lastLint.text !== view.state.doc.toString()) return; // the next lint shows them
  view.dispatch(setDiagnostics(view.state, allDiagnostics(view.state.doc, lastLint.problems)));
}

function allDiagnostics(doc, problems) {
  const out = problems.map((p) => toDiagnostic(doc, p, "error", "connectd lint"));
  for (const p of extraDiagnostics) out.push(toDiagnostic(doc, p, "error", p.source));
  return out;
}

// toDiagnostic turns a 1-based line/column into an editor range: from the
// column to the end of the word there (or of the line).
export function toDiagnostic(doc, p, severity, source) {
  const ln = Math.min(Math.max(p.line, 1), doc.lines);
  const line = doc.line(ln);
  const from = line.from + Math.min(Math.max((p.column || p.col || 1) - 1, 0), line.length);
  let to = from;
  while (to < line.to && !/\s/.test(doc.sliceString(to, to + 1))) to++;
  if (to === from) to = line.to;
  return { from, to, severity, message: p.message, source };
}

export let lastLint = { problems: [], at: 0 };

const lintSource = linter(async (view) => {
  const started = performance.now();
  const text = view.state.doc.toString();
  if (!yamlBuffer) {
    lastLint = { problems: [], started, at: performance.now(), text };
    return [];
  }
  const r = await api("POST", "/api/lint", text);
  if (!r.ok) return [];
  if (view.state.doc.toString() !== text) return []; // stale: a newer lint follows
  const out = allDiagnostics(view.state.doc, r.data.problems);
  lastLint = { problems: r.data.problems, started, at: performance.now(), text };
  document.dispatchEvent(new CustomEvent("studio-lint", { detail: r.data.problems }));
  return out;
}, { delay: lintDelay });

// A flash of the range a graph node or catalog error jumped to.
const flashEffect = StateEffect.define();
const flashField = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (e.is(flashEffect)) {
        deco = e.value ? Decoration.set([Decoration.mark({ class: "cm-flash" }).range(e.value.from, e.value.to)]) : Decoration.none;
      }
    }
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export function jumpTo(view, start, end) {
  const doc = view.state.doc;
  const pos = (p) => {
    const line = doc.line(Math.min(Math.max(p.line, 1), doc.lines));
    return line.from + Math.min(Math.max((p.col || p.column || 1) - 1, 0), line.length);
  };
  const from = pos(start);
  const to = end ? Math.min(pos(end) + 1, doc.length) : from;
  view.dispatch({
    selection: { anchor: from },
    effects: [EditorView.scrollIntoView(from, { y: "center" }), flashEffect.of(to > from ? { from, to } : null)],
  });
  view.focus();
}

export function createEditor(parent, onChange) {
  const state = EditorState.create({
    doc: "",
    extensions: [
      lineNumbers(),
      highlightActiveLineGutter(),
      foldGutter(),
      history(),
      drawSelection(),
      indentOnInput(),
      bracketMatching(),
      highlightActiveLine(),
      highlightSelectionMatches(),
      syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
      EditorState.tabSize.of(2),
      yaml(),
      autocompletion({ override: [complete], activateOnTyping: true, icons: false, interactionDelay: completionInteractionDelay }),
      hover,
      lintSource,
      lintGutter(),
      flashField,
      keymap.of([...completionKeymap, ...defaultKeymap, ...historyKeymap, ...foldKeymap, ...searchKeymap, indentWithTab]),
      EditorView.updateListener.of((u) => {
        if (u.docChanged || u.selectionSet) onChange(u);
      }),
    ],
  });
  return new EditorView({ state, parent });
}
