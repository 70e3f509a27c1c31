package studio

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// config200 returns the quickstart grown to exactly 200 lines with
// mapping processors, a config that lints clean.
func config200(t *testing.T) string {
	t.Helper()
	quick, err := os.ReadFile(filepath.Join(repoRoot(), "config", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(quick), "\n"), "\n")
	at := -1
	for i, l := range lines {
		if l == "  processors:" {
			at = i + 1
		}
	}
	if at < 0 {
		t.Fatal("the quickstart has no pipeline processors")
	}
	var extra []string
	for n := 0; len(lines)+len(extra) < 200; n++ {
		step := []string{
			fmt.Sprintf("    - label: enrich_%d", n),
			"      mapping: |",
			"        root = this",
			fmt.Sprintf("        root.step_%d = %d", n, n),
		}
		if len(lines)+len(extra)+len(step) > 200 {
			step = []string{fmt.Sprintf("    # step %d", n)}
		}
		extra = append(extra, step...)
	}
	out := append(append(append([]string{}, lines[:at]...), extra...), lines[at:]...)
	if len(out) != 200 {
		t.Fatalf("built %d lines", len(out))
	}
	return strings.Join(out, "\n") + "\n"
}

// TestStudioLintLatency measures, in the browser, the time from a
// keystroke that makes a typo to its diagnostic drawn in the editor, on a
// 200-line config: the lint delay after the last keystroke (editor.js
// lintDelay), the request to the lint API and the drawing. It is a
// measurement, logged (docs/benchmarks.md), not an assertion.
func TestStudioLintLatency(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "big.yaml")
	text := config200(t)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startStudio(t, dir, file)
	run(t, ctx, chromedp.Navigate(s.URL))
	waitJS(t, ctx, 30*time.Second, `document.body.dataset.ready === "true"`, "")
	waitLintSettled(t, ctx)
	if n := evalAs[int](t, ctx, `studio.lastLint.problems.length`); n != 0 {
		t.Fatalf("the 200-line config has %d lint problems", n)
	}
	// The page notes the time of each key down (capture phase, before the
	// editor sees it) and of the first error range drawn after it.
	eval(t, ctx, `(() => {
		window.__lat = { t0: 0, t1: 0 };
		window.addEventListener("keydown", () => { window.__lat = { t0: performance.now(), t1: 0 }; }, true);
		new MutationObserver(() => {
			if (window.__lat.t0 && !window.__lat.t1 && document.querySelector(".cm-lintRange-error")) window.__lat.t1 = performance.now();
		}).observe(document.querySelector(".cm-content"), { childList: true, subtree: true, attributes: true });
		return true; })()`, new(bool))

	const rounds = 15
	var lat []float64
	for i := 0; i < rounds; i++ {
		cursorAt(t, ctx, "            topic: quickstart", len("            topic"))
		run(t, ctx, chromedp.KeyEvent("x")) // topicx: an unknown field
		waitJS(t, ctx, 10*time.Second, `window.__lat.t1 > 0`, `window.__lat`)
		lat = append(lat, evalAs[float64](t, ctx, `window.__lat.t1 - window.__lat.t0`))
		t.Logf("round %d: %v", i, evalAs[[]float64](t, ctx, `[studio.lastLint.started - window.__lat.t0, studio.lastLint.at - studio.lastLint.started, window.__lat.t1 - studio.lastLint.at]`))
		run(t, ctx, press('\b'))
		waitJS(t, ctx, 10*time.Second, `document.querySelectorAll(".cm-lintRange-error").length === 0 && studio.lastLint.text === studio.view.state.doc.toString()`, "")
	}
	// The lint API alone, from this process, on the same typo.
	typo := strings.Replace(text, "            topic: quickstart", "            topicx: quickstart", 1)
	var api []float64
	for i := 0; i < rounds; i++ {
		start := time.Now()
		if code, body := postJSON(t, s, "/api/lint", typo); code != 200 || !strings.Contains(body, "topicx") {
			t.Fatalf("lint API: %d %s", code, body)
		}
		api = append(api, float64(time.Since(start).Microseconds())/1000)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("lint latency, keystroke to diagnostic drawn, 200-line config, %d rounds: median %.0f ms, p90 %.0f ms, max %.0f ms (lint delay %d ms included); lint API alone: median %.1f ms; load %s",
		rounds, quantile(lat, 0.5), quantile(lat, 0.9), quantile(lat, 1), evalAs[int](t, ctx, "studio.lintDelay"), quantile(api, 0.5), strings.Join(strings.Fields(string(load))[:3], " "))
}

func quantile(xs []float64, q float64) float64 {
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	i := int(q*float64(len(s)-1) + 0.5)
	return s[i]
}
