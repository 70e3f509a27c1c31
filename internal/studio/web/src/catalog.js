// The catalog view (POST /api/catalog): the tables the pipeline uses, with
// columns, types, key, metadata columns and watermark; DDL errors at their
// line and column in the file, which also show in the editor.

import { el } from "./api.js";

export function renderCatalog(box, cat, onJump) {
  box.replaceChildren();
  if (!cat) return;
  for (const err of cat.errors || []) {
    box.append(el("div", { class: "error catalog-error", onclick: () => err.line && !err.file && onJump({ line: err.line, col: err.col || 1 }) },
      err.line ? el("b", { text: `${err.file ? err.file + ":" : ""}${err.line}:${err.col || 1} ` }) : null, err.message, err.path ? el("span", { class: "muted", text: ` (${err.path})` }) : null));
  }
  const tables = cat.tables || [];
  if (!tables.length && !(cat.errors || []).length) {
    box.append(el("p", { class: "muted", text: "No tables: this pipeline has no table, catalog or ddl field." }));
  }
  for (const t of tables) {
    const pk = new Set(t.primary_key || []);
    box.append(el("section", { class: "table", "data-table": t.name },
      el("h3", { onclick: () => t.range && onJump(t.range.start, t.range.end) }, el("code", { text: t.name }), " ", el("span", { class: "muted", text: t.source === "catalog" ? `catalog ${t.catalog || ""}` : t.source })),
      t.used_by && t.used_by.length ? el("div", { class: "muted", text: "used by " + t.used_by.map((u) => `${u.component} (${u.path})`).join(", ") }) : null,
      el("table", {},
        el("thead", {}, el("tr", {}, el("th", { text: "column" }), el("th", { text: "type" }), el("th", { text: "kind" }), el("th", { text: "" }))),
        el("tbody", {}, (t.columns || []).map((c) => el("tr", { class: pk.has(c.name) ? "pk" : "" },
          el("td", {}, el("code", { text: c.name })),
          el("td", { text: c.type || "" }),
          el("td", { text: c.kind + (c.metadata_key ? ` (${c.metadata_key}${c.virtual ? ", virtual" : ""})` : "") + (c.expr ? ` AS ${c.expr}` : "") }),
          el("td", { text: pk.has(c.name) ? "PRIMARY KEY" : "" }))))),
      t.watermark ? el("div", { class: "kv" }, el("span", { class: "k", text: "watermark" }), el("span", { class: "v", text: `${t.watermark.column} - ${t.watermark.delay || ""}` })) : null,
      t.options ? el("div", { class: "options" }, Object.entries(t.options).map(([k, v]) => el("div", { class: "kv" }, el("span", { class: "k", text: k }), el("span", { class: "v", text: String(v) })))) : null));
  }
}

// catalogDiagnostics are the DDL errors at lines of this file, for the editor.
export function catalogDiagnostics(cat) {
  return ((cat && cat.errors) || []).filter((e) => e.line && !e.file).map((e) => ({ line: e.line, col: e.col || 1, message: e.message, source: "catalog" }));
}
