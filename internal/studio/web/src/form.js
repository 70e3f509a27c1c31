// Forms: the component under the cursor, as a form generated from its
// schema (enums as selects, defaults shown, Flink options shown). An edit
// changes the YAML through the `yaml` package's Document, which keeps
// comments and key order: a value that is there is replaced in place (its
// quoting kept), a field that is not is added as the mapping's last key.

import { parseDocument, isMap, isSeq, isScalar, isPair } from "yaml";
import { el } from "./api.js";
import { walk, deref, flinkOption, defaultText, typeText } from "./schema.js";

// docPathAt returns the path (keys and list indexes) of the deepest node
// of doc whose range holds offset.
export function docPathAt(doc, offset) {
  const path = [];
  let node = doc.contents;
  for (let guard = 0; node && guard < 200; guard++) {
    let next = null;
    if (isMap(node)) {
      for (const pair of node.items) {
        const k = pair.key, v = pair.value;
        const start = k && k.range ? k.range[0] : v && v.range ? v.range[0] : -1;
        const end = v && v.range ? v.range[2] : k && k.range ? k.range[2] : -1;
        if (start <= offset && offset <= end) {
          path.push(isScalar(k) ? k.value : String(k));
          next = v;
          break;
        }
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        if (!next && item && item.range && item.range[0] <= offset && offset <= item.range[2]) {
          path.push(i);
          next = item;
        }
      });
    }
    if (!next) break;
    node = next;
  }
  return path;
}

// componentAt returns the component whose config holds offset: its schema
// name (output.kafka_sink) and path in the document.
export function componentAt(text, offset) {
  const doc = parseDocument(text, { keepSourceTokens: false });
  if (doc.errors.length) return { error: doc.errors[0].message };
  const path = docPathAt(doc, offset);
  const { component } = walk(path);
  if (!component) return null;
  return { ...component, doc };
}

// plainSafe: a string that YAML reads back as the same string unquoted.
function scalarText(value, s, orig) {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  const str = String(value);
  if (orig && orig.type === "QUOTE_SINGLE") return "'" + str.replace(/'/g, "''") + "'";
  if (orig && orig.type === "QUOTE_DOUBLE") return JSON.stringify(str);
  const special = /^(true|false|yes|no|on|off|null|~|[-+]?[\d.]+(e[-+]?\d+)?|0x[\da-f]+)$/i.test(str);
  if (/^[A-Za-z0-9_./@-][A-Za-z0-9_./@ :-]*$/.test(str) && !/: |:$| $/.test(str) && !special) return str;
  return JSON.stringify(str);
}

// setField sets path to value in text and returns the new text, keeping
// every other byte when it can: an existing scalar is replaced in place, a
// new key is added after the last key of a block mapping at its
// indentation; otherwise the Document is changed and printed whole (still
// with its comments and order).
export function setField(text, path, value, s) {
  const doc = parseDocument(text);
  if (doc.errors.length) throw new Error("fix the YAML first: " + doc.errors[0].message);
  const cur = doc.getIn(path, true);
  if (value === "" || value === undefined) {
    // An emptied field goes back to its default: the key is removed.
    if (cur === undefined) return text;
    doc.deleteIn(path);
    return doc.toString({ lineWidth: 0 });
  }
  if (isScalar(cur) && cur.range) {
    const [from, to] = cur.range;
    return text.slice(0, from) + scalarText(value, s, cur) + text.slice(to);
  }
  const parent = doc.getIn(path.slice(0, -1), true);
  const key = path[path.length - 1];
  if (cur === undefined && isMap(parent) && parent.items.length && !parent.flow && parent.range) {
    const first = parent.items[0].key;
    const last = parent.items[parent.items.length - 1];
    const lineStart = text.lastIndexOf("\n", first.range[0] - 1) + 1;
    const indent = first.range[0] - lineStart;
    let at = (last.value && last.value.range ? last.value.range[1] : last.key.range[1]);
    if (text[at - 1] !== "\n") {
      const nl = text.indexOf("\n", at);
      at = nl < 0 ? text.length : nl + 1;
    }
    const insert = " ".repeat(indent) + key + ": " + scalarText(value, s) + "\n";
    const pre = at === text.length && !text.endsWith("\n") ? text + "\n" : text.slice(0, at);
    return pre + insert + text.slice(at);
  }
  doc.setIn(path, value);
  return doc.toString({ lineWidth: 0 });
}

// choiceLike: a string field whose examples are plain words that its
// description names in backticks, i.e. its values, not samples.
function choiceLike(s) {
  const ex = s.examples || [];
  const d = s.description || "";
  return s.type === "string" && ex.length > 1 && ex.every((x) => typeof x === "string" && /^[A-Za-z0-9_.-]+$/.test(x) && d.includes("`" + x + "`"));
}

function coerce(raw, s) {
  if (raw === "") return "";
  const t = Array.isArray(s.type) ? s.type[0] : s.type;
  if (t === "integer" && /^-?\d+$/.test(raw)) return parseInt(raw, 10);
  if (t === "number" && /^-?[\d.]+$/.test(raw)) return Number(raw);
  if (t === "boolean") return raw === "true";
  return raw;
}

// renderForm fills box with the form of the component at the cursor.
// getText() returns the buffer as it is when a field changes (the form
// may have been drawn from an older one); apply(newText) replaces it.
export function renderForm(box, getText, offset, apply) {
  const text = getText();
  box.replaceChildren();
  let c;
  try {
    c = componentAt(text, offset);
  } catch (e) {
    c = { error: String(e) };
  }
  if (!c) {
    box.append(el("p", { class: "muted", text: "Put the cursor in a component (or click a node in the graph) to edit it with a form." }));
    return;
  }
  if (c.error) {
    box.append(el("p", { class: "muted", text: "The YAML does not parse; the form is back when it does. " + c.error }));
    return;
  }
  const [kind, name] = c.name.split(".");
  box.append(el("h3", {}, el("code", { text: name }), " ", el("span", { class: "muted", text: kind + " at " + c.path.join(".") })));
  if (c.schema.description) box.append(el("p", { class: "desc", text: c.schema.description }));
  const props = deref(c.schema).properties || {};
  const node = c.doc.getIn(c.path, true);
  const current = node && typeof node.toJSON === "function" ? node.toJSON() : node;
  const set = [], unset = [];
  for (const [field, raw] of Object.entries(props)) {
    const s = deref(raw);
    if (!s) continue;
    const has = current && typeof current === "object" && field in current;
    (has ? set : unset).push([field, s]);
  }
  const fields = (list, prefix, value) => list.map(([field, s]) => fieldRow(field, s, prefix.concat(field), value ? value[field] : undefined, getText, apply));
  box.append(el("div", { class: "form-fields" }, fields(set, c.path, current)));
  if (unset.length) {
    box.append(el("details", { class: "more", open: set.length === 0 }, el("summary", { text: `${unset.length} more fields (defaults)` }), fields(unset, c.path, current)));
  }
}

function fieldRow(field, s, path, value, getText, apply) {
  const id = "f-" + path.join("-");
  const flink = flinkOption(s);
  const def = defaultText(s);
  const head = el("label", { for: id, class: "field-name" }, field, flink ? el("span", { class: "flink", title: "Flink option", text: flink.replace(/`/g, "") }) : null);
  const help = el("div", { class: "field-help", title: s.description || "" }, s.description ? s.description.slice(0, 160) + (s.description.length > 160 ? "…" : "") : "");
  const onChange = (raw) => {
    try {
      apply(setField(getText(), path, coerce(raw, s), s));
    } catch (e) {
      help.textContent = String(e.message || e);
      help.classList.add("error");
    }
  };
  let input;
  if (s.properties && !s.enum) {
    const inner = Object.entries(s.properties).map(([k, r]) => [k, deref(r)]).filter(([, x]) => x && !x.properties && x.type !== "array" && x.type !== "object");
    return el("fieldset", { class: "field nested", "data-field": path.join(".") }, el("legend", {}, field, flink ? el("span", { class: "flink", text: flink.replace(/`/g, "") }) : null),
      inner.map(([k, x]) => fieldRow(k, x, path.concat(k), value && typeof value === "object" ? value[k] : undefined, getText, apply)));
  }
  if (typeof value === "object" && value !== null) {
    input = el("code", { class: "complex", text: "(edit in YAML) " + JSON.stringify(value).slice(0, 80) });
  } else if (s.enum || s.type === "boolean") {
    const options = s.enum ? s.enum.map(String) : ["true", "false"];
    input = el("select", { id, onchange: (e) => onChange(e.target.value) },
      el("option", { value: "", text: def !== "" ? `(default: ${def})` : "(unset)" }),
      options.map((o) => el("option", { value: o, text: o, selected: value !== undefined && String(value) === o })));
  } else if (choiceLike(s)) {
    // A string whose spec names its values (delivery_guarantee, which
    // also takes Flink's spellings, so it has no enum): a select of
    // those, and the value the file has if it is another.
    const opts = s.examples.map(String);
    if (value !== undefined && !opts.includes(String(value))) opts.push(String(value));
    input = el("select", { id, onchange: (e) => onChange(e.target.value) },
      el("option", { value: "", text: def !== "" ? `(default: ${def})` : "(unset)" }),
      opts.map((o) => el("option", { value: o, text: o, selected: value !== undefined && String(value) === o })));
  } else if (s.examples && s.examples.length && s.examples.every((x) => typeof x !== "object") && s.type !== "array") {
    // Free text with the spec's examples offered.
    const listId = id + "-examples";
    input = el("span", { class: "with-examples" },
      el("input", {
        id, type: "text", list: listId,
        value: value === undefined || value === null ? "" : String(value),
        placeholder: def !== "" ? `default: ${def}` : "",
        onchange: (e) => onChange(e.target.value),
      }),
      el("datalist", { id: listId }, s.examples.map((x) => el("option", { value: String(x) }))));
  } else if (s.type === "array" || s.type === "object") {
    input = el("code", { class: "complex", text: value === undefined ? "(edit in YAML)" : JSON.stringify(value).slice(0, 80) });
  } else {
    input = el("input", {
      id, type: s.type === "integer" || s.type === "number" ? "number" : "text",
      value: value === undefined || value === null ? "" : String(value),
      placeholder: def !== "" ? `default: ${def}` : "",
      onchange: (e) => onChange(e.target.value),
    });
  }
  return el("div", { class: "field", "data-field": path.join(".") }, head, input, el("div", { class: "field-meta" }, typeText(s) ? el("span", { class: "type", text: typeText(s) }) : null, def !== "" ? el("span", { class: "default", text: "default " + def }) : null), help);
}
