// The config schema of `connectd schema` (GET /api/schema), and where a
// position in the YAML text sits in it: completion, hover docs and forms
// are driven by it.

let root = null;

export async function loadSchema() {
  const resp = await fetch("/api/schema");
  if (!resp.ok) throw new Error(`schema: ${resp.status}`);
  root = await resp.json();
  return root;
}

export function schemaRoot() {
  return root;
}

// deref follows $ref, and for a choice (anyOf/oneOf: a value or an
// interpolation string) takes the branch that describes the value.
export function deref(s) {
  let guard = 0;
  while (s && guard++ < 20) {
    if (s.$ref) {
      const name = s.$ref.replace("#/definitions/", "");
      const d = root.definitions[name];
      s = d ? { ...d, ...withoutRef(s), defName: name } : null;
      continue;
    }
    const alts = s.anyOf || s.oneOf;
    if (alts && !s.properties && !s.items && !s.enum) {
      const best = alts.find((a) => a.properties || a.items || a.enum || a.$ref) || alts.find((a) => !a.pattern) || alts[0];
      s = { ...best, ...withoutAlts(s) };
      continue;
    }
    break;
  }
  return s;
}

function withoutRef(s) {
  const { $ref, ...rest } = s;
  return rest;
}
function withoutAlts(s) {
  const { anyOf, oneOf, ...rest } = s;
  return rest;
}

// child returns the schema of seg under s: a key of an object, or "[]"
// (any item of a list) or a number (an item).
export function child(s, seg) {
  s = deref(s);
  if (!s) return null;
  if (seg === "[]" || typeof seg === "number") {
    return s.items ? deref(s.items) : null;
  }
  if (s.properties && s.properties[seg]) return deref(s.properties[seg]);
  if (s.additionalProperties && typeof s.additionalProperties === "object") return deref(s.additionalProperties);
  return null;
}

// walk resolves a path from the root; it also returns the innermost
// component on the way: a schema that is a definition named
// "<type>.<name>" (input.kafka_source), and the path to it.
export function walk(path) {
  let s = deref(root);
  let component = null;
  for (let i = 0; i < path.length && s; i++) {
    s = child(s, path[i]);
    if (s && s.defName && s.defName.includes(".")) {
      component = { name: s.defName, schema: s, path: path.slice(0, i + 1) };
    }
  }
  return { schema: s, component };
}

// flinkOption finds the Flink option a field's description names
// ("Flink option: `sink.delivery-guarantee`.").
export function flinkOption(s) {
  const d = (s && s.description) || "";
  const m = d.match(/Flink (?:options?|equivalent|counterpart|name)s?:\s*([^\n]+?)(?:\.\s|\.$|$)/i);
  return m ? m[1].trim() : "";
}

export function defaultText(s) {
  if (!s || s.default === undefined) return "";
  return typeof s.default === "string" ? s.default : JSON.stringify(s.default);
}

export function typeText(s) {
  s = deref(s);
  if (!s) return "";
  if (s.enum) return s.enum.join(" | ");
  if (s.type === "array") return `list of ${typeText(s.items) || "values"}`;
  if (Array.isArray(s.type)) return s.type.join(" | ");
  return s.type || (s.properties ? "object" : "");
}

// ---- where the cursor is, from indentation ----
//
// While the user types, the buffer is often not valid YAML, so the path of
// a position is found from the indentation of the lines above it, as a
// YAML block structure defines it: each line's key and list dashes, read
// right to left, are ancestors of what is more indented below them.

// lineParts splits a line into its indentation, list dashes and key.
export function lineParts(text) {
  const m = text.match(/^(\s*)((?:-\s+)*)(-\s*$)?/);
  const indent = m[1].length;
  const dashes = [];
  let i = indent;
  const dashRe = /-(\s+|$)/y;
  while (true) {
    dashRe.lastIndex = i;
    const d = dashRe.exec(text);
    if (!d || text[i] !== "-") break;
    dashes.push(i);
    i = dashRe.lastIndex;
  }
  const rest = text.slice(i);
  const km = rest.match(/^("[^"]*"|'[^']*'|[^\s#:][^:#]*?)\s*:(\s|$)/);
  let key = null;
  let valueCol = -1;
  if (km) {
    key = km[1].replace(/^["']|["']$/g, "");
    valueCol = i + km[0].length;
  }
  return { indent, dashes, keyCol: key !== null ? i : -1, key, contentCol: i, valueCol, blank: /^\s*(#.*)?$/.test(text) };
}

// contextAt returns what a position (1-based line, 0-based column) sits
// in: the path of its parent, and whether it is a key or the value of key.
export function contextAt(lines, lineNo, col) {
  const text = lines[lineNo - 1] || "";
  const before = text.slice(0, col);
  const p = lineParts(text);
  const segs = [];
  let ctx;
  let mode = "key";
  let key = null;
  if (p.key !== null && p.valueCol >= 0 && col >= p.valueCol - 1 && before.includes(":")) {
    mode = "value";
    key = p.key;
    ctx = p.keyCol;
  } else {
    ctx = p.contentCol <= col ? p.contentCol : Math.min(col, p.contentCol);
  }
  // dashAt: the column of the list dash last taken as an ancestor. YAML
  // lets a list sit at its key's own indentation ("key:\n- item"), so a
  // key with no value at that column is the list's parent.
  let dashAt = -1;
  for (let d = p.dashes.length - 1; d >= 0; d--) {
    if (p.dashes[d] < ctx) {
      segs.push("[]");
      ctx = dashAt = p.dashes[d];
    }
  }
  for (let n = lineNo - 2; n >= 0 && (ctx > 0 || dashAt === 0); n--) {
    const text = lines[n];
    const l = lineParts(text);
    if (l.blank) continue;
    const emptyValue = l.keyCol >= 0 && /^\s*(#.*)?$/.test(text.slice(l.valueCol));
    if (l.keyCol >= 0 && (l.keyCol < ctx || (l.keyCol === dashAt && emptyValue))) {
      segs.push(l.key);
      ctx = l.keyCol;
      dashAt = -1;
    } else if (l.contentCol < ctx && l.keyCol < 0 && l.dashes.length === 0) {
      dashAt = -1;
    }
    // A less indented line that is neither key nor dash (a flow value
    // going on, a broken line) is no ancestor: keep looking above it.
    for (let d = l.dashes.length - 1; d >= 0; d--) {
      if (l.dashes[d] < ctx) {
        segs.push("[]");
        ctx = dashAt = l.dashes[d];
      }
    }
  }
  segs.reverse();
  return { path: segs, mode, key, word: (before.match(/[\w.$-]*$/) || [""])[0] };
}

// keyAt returns the key under a column of a line and its path (hover).
export function keyAt(lines, lineNo, col) {
  const text = lines[lineNo - 1] || "";
  const p = lineParts(text);
  if (p.key === null || col < p.keyCol || col > p.keyCol + p.key.length) return null;
  const c = contextAt(lines, lineNo, p.keyCol);
  return { path: c.path, key: p.key, from: p.keyCol, to: p.keyCol + p.key.length };
}
