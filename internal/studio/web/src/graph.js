// The pipeline graph (POST /api/graph): input → buffer → processors →
// output as columns, containers (broker, switch, ...) holding their
// children, resources in a row of their own, Kafka details on Kafka nodes,
// and the exactly_once pairing of a kafka_source and a kafka_sink drawn as
// a dashed link between them. Clicking a node jumps to its YAML.

import { el } from "./api.js";

const sections = [
  ["input", "Input"],
  ["buffer", "Buffer"],
  ["pipeline", "Processors"],
  ["output", "Output"],
];
const resourceSections = [
  ["input_resources", "Input resources"],
  ["processor_resources", "Processor resources"],
  ["output_resources", "Output resources"],
];

function kafkaDetails(k) {
  if (!k) return null;
  const rows = [];
  const add = (label, v) => {
    if (v === undefined || v === null || v === "" || (Array.isArray(v) && !v.length)) return;
    rows.push(el("div", { class: "kv" }, el("span", { class: "k", text: label }), el("span", { class: "v", text: Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v) })));
  };
  add("topics", k.topics);
  add("pattern", k.topic_pattern);
  add("topic", k.topic);
  add("group", k.consumer_group);
  add("assignment", k.assignment);
  add("start", k.start_from);
  add("stop", k.stop_at);
  add("delivery", k.delivery_guarantee);
  add("brokers", k.seed_brokers);
  if (k.table) add("table", k.table.name + (k.table.source ? ` (${k.table.source})` : ""));
  if (k.table_error) add("table error", k.table_error);
  const wm = k.watermark || (k.table && k.table.watermark);
  if (wm) add("watermark", wm.column ? `${wm.column} - ${wm.delay || wm.max_out_of_orderness || ""}` : Object.entries(wm).map(([a, b]) => `${a}=${b}`).join(" "));
  add("format", k.format);
  add("on_error", k.on_error);
  if (k.window) add("window", Object.entries(k.window).map(([a, b]) => `${a}=${b}`).join(" "));
  return rows.length ? el("div", { class: "kafka" }, rows) : null;
}

export function renderGraph(box, graph, onJump) {
  box.replaceChildren();
  if (!graph) return;
  const nodes = graph.nodes || [];
  const byParent = new Map();
  for (const n of nodes) {
    const p = n.parent || "";
    if (!byParent.has(p)) byParent.set(p, []);
    byParent.get(p).push(n);
  }
  const guarantees = new Map();
  for (const n of nodes) if (n.kafka && n.kafka.delivery_guarantee) guarantees.set(n.id, n.kafka.delivery_guarantee);
  const flowLabels = new Map();
  for (const e of graph.edges || []) if (e.kind === "flow" && e.label) flowLabels.set(e.to, e.label);

  const nodeBox = (n) => {
    const kids = byParent.get(n.id) || [];
    const cls = ["node", n.component && n.component.startsWith("kafka_") ? "node-kafka" : "", kids.length ? "node-container" : ""].join(" ");
    const g = guarantees.get(n.id);
    return el("div", { class: cls, "data-id": n.id, "data-component": n.component || "", title: n.path || n.id },
      flowLabels.has(n.id) ? el("div", { class: "case", text: flowLabels.get(n.id) }) : null,
      el("div", { class: "node-head", onclick: (ev) => { ev.stopPropagation(); if (n.range) onJump(n.range.start, n.range.end); } },
        el("span", { class: "node-label", text: n.label || n.component }),
        g ? el("span", { class: "badge badge-" + g, text: g }) : null),
      kafkaDetails(n.kafka),
      kids.length ? el("div", { class: "children" }, kids.map(nodeBox)) : null);
  };
  const top = byParent.get("") || [];
  const cols = el("div", { class: "graph-cols" });
  sections.forEach(([sec, title], i) => {
    const here = top.filter((n) => n.section === sec);
    if (!here.length && sec === "buffer") return;
    if (i > 0 && cols.childNodes.length) cols.append(el("div", { class: "arrow", text: "→" }));
    cols.append(el("div", { class: "graph-col", "data-section": sec }, el("div", { class: "col-title", text: title }), here.length ? here.map(nodeBox) : el("div", { class: "muted", text: "none" })));
  });
  box.append(cols);
  const res = resourceSections.filter(([sec]) => top.some((n) => n.section === sec));
  if (res.length) {
    box.append(el("div", { class: "graph-resources" }, res.map(([sec, title]) => el("div", { class: "graph-col", "data-section": sec }, el("div", { class: "col-title", text: title }), top.filter((n) => n.section === sec).map(nodeBox)))));
  }
  const special = (graph.edges || []).filter((e) => e.kind !== "flow");
  if (special.length) {
    box.append(el("ul", { class: "edges" }, special.map((e) => el("li", { class: "edge edge-" + e.kind, "data-from": e.from, "data-to": e.to },
      el("span", { class: "edge-kind", text: e.kind === "exactly_once" ? "exactly-once" : e.kind }), " ", e.from, " ⇢ ", e.to, e.label ? el("span", { class: "muted", text: " — " + e.label }) : null))));
  }
  for (const err of graph.errors || []) {
    box.append(el("div", { class: "error", onclick: () => err.line && onJump({ line: err.line, col: err.col || 1 }) }, err.line ? `${err.line}:${err.col || 1} ` : "", err.message));
  }
  // The exactly_once pairs, drawn over the columns once they are laid out
  // (again when the pane is shown or resized: redrawLinks).
  box.eosEdges = special.filter((e) => e.kind === "exactly_once");
  requestAnimationFrame(() => redrawLinks(box));
}

export function redrawLinks(box) {
  if (box.offsetParent === null) return; // hidden: drawn when shown
  drawLinks(box, box.eosEdges || []);
}

function drawLinks(box, edges) {
  box.querySelectorAll("svg.links").forEach((s) => s.remove());
  if (!edges.length) return;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "links");
  const base = box.getBoundingClientRect();
  svg.setAttribute("width", box.scrollWidth);
  svg.setAttribute("height", box.scrollHeight);
  for (const e of edges) {
    const a = box.querySelector(`.node[data-id="${CSS.escape(e.from)}"] > .node-head`);
    const b = box.querySelector(`.node[data-id="${CSS.escape(e.to)}"] > .node-head`);
    if (!a || !b) continue;
    const ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
    const x1 = ra.right - base.left + box.scrollLeft, y1 = ra.top + ra.height / 2 - base.top + box.scrollTop;
    const x2 = rb.left - base.left + box.scrollLeft, y2 = rb.top + rb.height / 2 - base.top + box.scrollTop;
    const path = document.createElementNS(ns, "path");
    const dx = Math.max(40, (x2 - x1) / 2);
    path.setAttribute("d", `M${x1},${y1} C${x1 + dx},${y1 - 40} ${x2 - dx},${y2 - 40} ${x2},${y2}`);
    path.setAttribute("class", "link-eos");
    const title = document.createElementNS(ns, "title");
    title.textContent = e.label || "exactly-once";
    path.append(title);
    svg.append(path);
  }
  box.prepend(svg);
}
