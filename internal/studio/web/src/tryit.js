// Try it: run the pipeline on the embedded development broker or on its
// configured brokers (asked first), show the first output messages with
// their metadata, the live metrics and the logs, stop it; and run the
// file's `connectd test` unit tests.

import { api, el } from "./api.js";

export function createTryIt(box, getText, confirmDialog) {
  let run = null;
  let events = null;
  const status = el("span", { class: "run-state", text: "idle" });
  const metrics = el("div", { class: "metrics" });
  const messages = el("tbody", {});
  const logs = el("pre", { class: "logs" });
  const tests = el("div", { class: "tests" });
  const maxInput = el("input", { type: "number", min: "1", max: "10000", value: "20", class: "max", title: "messages to capture" });
  const stopBtn = el("button", { class: "stop", disabled: true, onclick: () => stop() }, "Stop");

  const start = async (target, confirmed) => {
    const body = { yaml: getText(), target, confirm_real_brokers: !!confirmed, max_messages: parseInt(maxInput.value, 10) || 20 };
    const r = await api("POST", "/api/run", body);
    if (r.status === 400 && r.data && r.data.brokers && !confirmed) {
      const ok = await confirmDialog(`Run against real brokers ${r.data.brokers.join(", ")}? The pipeline will read and write those clusters.`, "Run on real brokers");
      if (ok) return start(target, true);
      return;
    }
    if (r.status === 409 && r.data && r.data.id) {
      // A run is alive already (started from another window): follow it.
      status.textContent = `${r.data.error}; following ${r.data.id}`;
      attach(r.data.id);
      return;
    }
    if (!r.ok) {
      status.textContent = "error: " + ((r.data && r.data.error) || r.status);
      return;
    }
    run = r.data;
    messages.replaceChildren();
    logs.textContent = "";
    metrics.replaceChildren();
    status.textContent = `${run.id}: starting on ${run.brokers ? run.brokers.join(", ") : run.target}`;
    stopBtn.disabled = false;
    follow(run.id);
  };

  const follow = (id) => {
    if (events) events.close();
    events = new EventSource(`/api/run/${encodeURIComponent(id)}/events`);
    events.addEventListener("message", (e) => addMessage(JSON.parse(e.data)));
    events.addEventListener("metrics", (e) => showMetrics(JSON.parse(e.data)));
    events.addEventListener("log", (e) => {
      const l = JSON.parse(e.data);
      logs.textContent += l.line + "\n";
      if (logs.textContent.length > 200000) logs.textContent = logs.textContent.slice(-150000);
      logs.scrollTop = logs.scrollHeight;
    });
    events.addEventListener("state", (e) => {
      status.textContent = `${id}: ${JSON.parse(e.data).state}`;
      status.dataset.state = JSON.parse(e.data).state;
    });
    events.addEventListener("exit", (e) => {
      const x = JSON.parse(e.data);
      status.textContent = `${id}: exited (code ${x.code}${x.stopped_by_user ? ", stopped" : ""})${x.error ? ": " + x.error : ""}`;
      status.dataset.state = "exited";
      stopBtn.disabled = true;
      events.close();
      events = null;
    });
  };

  // attach follows a run this page did not start (a reload, another window).
  const attach = (id) => {
    run = { id };
    messages.replaceChildren();
    logs.textContent = "";
    stopBtn.disabled = false;
    follow(id);
  };

  const addMessage = (m) => {
    const meta = Object.entries(m.metadata || {}).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join("  ");
    messages.append(el("tr", { class: "message" }, el("td", { text: String(m.index) }), el("td", {}, el("code", { text: m.content })), el("td", { class: "meta", text: meta })));
  };

  const showMetrics = (m) => {
    const kv = (k, v) => el("div", { class: "metric" }, el("div", { class: "v", text: v }), el("div", { class: "k", text: k }));
    const rate = (x) => (x === undefined ? "-" : x >= 100 ? Math.round(x).toString() : x.toFixed(1));
    metrics.replaceChildren(
      kv("in / s", rate(m.records_in_per_sec)), kv("out / s", rate(m.records_out_per_sec)),
      kv("records in", String(m.records_in ?? "-")), kv("records out", String(m.records_out ?? "-")),
      kv("lag", m.kafka_source_lag === undefined ? "-" : String(m.kafka_source_lag)),
      kv("watermark", m.watermark_ms === undefined ? "-" : new Date(m.watermark_ms).toISOString().replace("T", " ").replace("Z", "")));
  };

  const stop = async () => {
    if (!run) return;
    stopBtn.disabled = true;
    status.textContent = `${run.id}: stopping`;
    const r = await api("POST", `/api/run/${encodeURIComponent(run.id)}/stop`);
    if (r.ok && r.data && r.data.exit) status.textContent = `${run.id}: exited (code ${r.data.exit.code}${r.data.exit.stopped_by_user ? ", stopped" : ""})`;
  };

  const runTests = async () => {
    tests.replaceChildren(el("p", { class: "muted", text: "running connectd test…" }));
    const r = await api("POST", "/api/test", { yaml: getText() });
    tests.replaceChildren();
    if (!r.ok) {
      tests.append(el("div", { class: "error", text: (r.data && r.data.error) || String(r.status) }));
      return;
    }
    const t = r.data;
    tests.append(el("div", { class: t.passed ? "pass" : "fail", text: t.passed ? "tests passed" : t.tests.length ? "tests failed" : t.output || "no tests" }));
    for (const l of t.lint || []) tests.append(el("div", { class: "error", text: "lint " + l }));
    for (const c of t.tests || []) {
      tests.append(el("div", { class: "test " + (c.passed ? "pass" : "fail") }, c.passed ? "✓ " : "✗ ", c.name, c.line ? el("span", { class: "muted", text: ` (line ${c.line})` }) : null,
        (c.failures || []).map((f) => el("pre", { class: "failure", text: f }))));
    }
  };

  box.replaceChildren(
    el("div", { class: "toolbar" },
      el("button", { class: "run-dev", onclick: () => start("dev_broker") }, "Run on dev broker"),
      el("button", { class: "run-real", onclick: () => start("configured") }, "Run on configured brokers"),
      stopBtn,
      el("label", { class: "muted" }, " first ", maxInput, " messages "),
      el("button", { class: "run-tests", onclick: runTests }, "Run tests")),
    el("div", {}, status),
    metrics,
    el("h4", { text: "Output messages" }),
    el("table", { class: "messages" }, el("thead", {}, el("tr", {}, el("th", { text: "#" }), el("th", { text: "content" }), el("th", { text: "metadata" }))), messages),
    el("h4", { text: "Unit tests" }),
    tests,
    el("h4", { text: "Logs" }),
    logs);
  // The run alive when the page loads is followed again.
  api("GET", "/api/run").then((r) => {
    if (r.ok && r.data && r.data.active && !run) attach(r.data.active);
  });
  return { stop };
}
