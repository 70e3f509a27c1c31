package studio

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestStudioInBrowser walks the studio as a user would, on a copy of the
// quickstart, each step checked in the page and on disk.
func TestStudioInBrowser(t *testing.T) {
	ctx := browser(t)
	dir := filepath.Join(t.TempDir(), "config")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	quick, err := os.ReadFile(filepath.Join(repoRoot(), "config", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "quickstart.yaml")
	if err := os.WriteFile(file, quick, 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(outside, []byte("secret: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startStudio(t, dir, file)

	// Load the quickstart: the page opens the file given.
	run(t, ctx, chromedp.Navigate(s.URL))
	waitJS(t, ctx, 30*time.Second, `document.body.dataset.ready === "true"`, `document.body.innerText.slice(0, 300)`)
	if got := doc(t, ctx); got != string(quick) {
		t.Fatalf("the editor holds %d bytes, not the quickstart's %d", len(got), len(quick))
	}
	if u := evalAs[string](t, ctx, "location.href"); strings.Contains(u, s.Token) {
		t.Errorf("the token stayed in the address bar: %s", u)
	}
	// The quickstart lints clean.
	waitJS(t, ctx, 10*time.Second, `studio.lastLint.at > 0`, "")
	if n := evalAs[int](t, ctx, `document.querySelectorAll(".cm-lintRange-error").length`); n != 0 {
		t.Fatalf("the quickstart shows %d diagnostics", n)
	}

	step(t, "complete a field", func(t *testing.T) {
		cursorAt(t, ctx, "consumer_group: connectd-quickstart", len("consumer_group: connectd-quickstart"))
		run(t, ctx, press('\r'), chromedp.KeyEvent("fetch_max_w"))
		waitJS(t, ctx, 10*time.Second, `[...document.querySelectorAll(".cm-tooltip-autocomplete li")].some(li => li.textContent.startsWith("fetch_max_wait"))`,
			`[[...document.querySelectorAll(".cm-tooltip-autocomplete li")].map(li => li.textContent), studio.view.state.doc.toString().slice(700, 1000)]`)
		// Enter accepts only once the list has been shown for CodeMirror's
		// interaction delay (75ms, editor.js): that is the one fixed wait.
		eval(t, ctx, `new Promise(r => setTimeout(() => r(true), 150))`, new(bool))
		run(t, ctx, press('\r'), chromedp.KeyEvent("750ms"))
		if want := "          consumer_group: connectd-quickstart\n          fetch_max_wait: 750ms\n"; !strings.Contains(doc(t, ctx), want) {
			t.Fatalf("after completing, the editor lacks %q:\n%s", want, doc(t, ctx)[:1200])
		}
		// Component names complete in a component slot: a new processor.
		before := doc(t, ctx)
		cursorAt(t, ctx, "pipeline:\n  processors:", len("pipeline:\n  processors:"))
		run(t, ctx, press('\r'), chromedp.KeyEvent("- table_dec"))
		waitJS(t, ctx, 10*time.Second, `[...document.querySelectorAll(".cm-tooltip-autocomplete li")].some(li => li.textContent.startsWith("table_decode"))`,
			`[[...document.querySelectorAll(".cm-tooltip-autocomplete li")].map(li => li.textContent), studio.view.state.doc.lineAt(studio.view.state.selection.main.head).text]`)
		eval(t, ctx, fmt.Sprintf(`(() => { const v = studio.view; v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: %s}}); return true; })()`, jsString(before)), new(bool))

		// Hover docs: description, default and Flink option of a field.
		cursorAt(t, ctx, "          start_from: earliest", 0)
		xy := evalAs[[]float64](t, ctx, `(() => { const v = studio.view; const i = v.state.doc.toString().indexOf("start_from: earliest") + 3;
			const c = v.coordsAtPos(i); return [c.left + 2, (c.top + c.bottom) / 2]; })()`)
		run(t, ctx, chromedp.MouseEvent(chromedp.MouseMoved, xy[0], xy[1]))
		waitJS(t, ctx, 10*time.Second, `document.querySelector(".cm-tooltip-hover .doc")`, "")
		hover := evalAs[string](t, ctx, `document.querySelector(".cm-tooltip-hover .doc").textContent`)
		for _, want := range []string{"start_from", "Default: committed", "Flink: scan.startup.mode"} {
			if !strings.Contains(hover, want) {
				t.Fatalf("the hover docs of start_from lack %q: %q", want, hover)
			}
		}
		waitJS(t, ctx, 10*time.Second, `studio.lastLint.text === studio.view.state.doc.toString() && document.querySelectorAll(".cm-lintRange-error").length === 0`, `studio.lastLint.problems`)
	})

	step(t, "typo shows a diagnostic at the line connectd lint gives, fix removes it", func(t *testing.T) {
		cursorAt(t, ctx, "            topic: quickstart", len("            topic"))
		run(t, ctx, press('\b'), chromedp.KeyEvent("k")) // topic -> topik
		text := doc(t, ctx)
		if !strings.Contains(text, "            topik: quickstart") {
			t.Fatalf("the typo was not typed:\n%s", text[strings.Index(text, "kafka_sink:"):][:300])
		}
		want := cliLintLines(t, text)
		if len(want) == 0 {
			t.Fatal("connectd lint finds nothing in the typo")
		}
		typoLine := 1 + strings.Count(text[:strings.Index(text, "topik:")], "\n")
		if !contains(want, typoLine) {
			t.Fatalf("connectd lint reports lines %v, not the typo's line %d", want, typoLine)
		}
		waitJS(t, ctx, 10*time.Second, fmt.Sprintf(`JSON.stringify([...new Set(%s)].sort((a,b)=>a-b)) === %q`, errorLinesJS, intsJSON(want)), errorLinesJS)
		// The message is connectd's "did you mean".
		msgs := evalAs[[]string](t, ctx, `studio.lastLint.problems.map(p => p.line + ":" + p.column + " " + p.message)`)
		if !containsSub(msgs, fmt.Sprintf("%d:13 field topik: kafka_sink has no such field; did you mean topic?", typoLine)) {
			t.Fatalf("diagnostics %v lack the did-you-mean at %d:13", msgs, typoLine)
		}
		run(t, ctx, press('\b'), chromedp.KeyEvent("c"))
		waitJS(t, ctx, 10*time.Second, `document.querySelectorAll(".cm-lintRange-error").length === 0 && studio.view.state.doc.toString().includes("            topic: quickstart")`, errorLinesJS)
	})

	step(t, "form switches the delivery guarantee, keeping comments", func(t *testing.T) {
		before := doc(t, ctx)
		cursorAt(t, ctx, "            topic: quickstart", 14)
		sel := `#f-output-switch-cases-0-output-kafka_sink-delivery_guarantee`
		waitJS(t, ctx, 10*time.Second, fmt.Sprintf(`document.querySelector(%q)`, sel), `document.querySelector("#form").innerText.slice(0, 300)`)
		if txt := evalAs[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).closest(".field").textContent`, sel)); !strings.Contains(txt, "sink.delivery-guarantee") || !strings.Contains(txt, "at_least_once") {
			t.Fatalf("the field shows neither its Flink option nor its default: %q", txt)
		}
		// Its values are a select; a free-text field with examples (key)
		// is a text input showing the file's value.
		if tags := evalAs[[]string](t, ctx, fmt.Sprintf(`[document.querySelector(%q).tagName, document.querySelector("#f-output-switch-cases-0-output-kafka_sink-key").tagName, document.querySelector("#f-output-switch-cases-0-output-kafka_sink-key").value]`, sel)); fmt.Sprint(tags) != "[SELECT INPUT ${! this.user }]" {
			t.Fatalf("delivery_guarantee, key: %v, want a select and a text input holding the key", tags)
		}
		eval(t, ctx, fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = "exactly_once"; s.dispatchEvent(new Event("change")); return true; })()`, sel), new(bool))
		waitJS(t, ctx, 5*time.Second, `studio.view.state.doc.toString().includes("delivery_guarantee: exactly_once")`, "")
		after := doc(t, ctx)
		want := "              period: 100ms\n            delivery_guarantee: exactly_once\n      - output:"
		if !strings.Contains(after, want) {
			t.Fatalf("the form's edit is not the mapping's last key:\n%s", after)
		}
		// Only that line was added: every comment and every other line is kept.
		if strings.Replace(after, "            delivery_guarantee: exactly_once\n", "", 1) != before {
			t.Fatalf("the form changed more than the one line:\n--- before\n%s\n--- after\n%s", before, after)
		}
		for _, c := range []string{"# connectd quickstart.", "    # Records read back from Kafka are rendered as one line each; generated"} {
			if !strings.Contains(after, c) {
				t.Fatalf("comment %q lost", c)
			}
		}
		// The live lint follows the form: exactly_once wants a
		// transactional_id_prefix (and one pipeline thread), as connectd
		// lint says.
		waitLintSettled(t, ctx)
		msgs := evalAs[[]string](t, ctx, `studio.lastLint.problems.map(p => p.line + ":" + p.column + " " + p.message)`)
		if !containsSub(msgs, "field transactional_id_prefix: required with delivery_guarantee exactly_once") {
			t.Fatalf("after switching to exactly_once the diagnostics are %v", msgs)
		}
		if want := cliLintLines(t, after); fmt.Sprint(want) != fmt.Sprint(evalAs[[]int](t, ctx, `[...new Set(studio.lastLint.problems.map(p => p.line))].sort((a,b)=>a-b)`)) {
			t.Fatalf("the editor's diagnostics %v are not at connectd lint's lines %v", msgs, want)
		}
	})

	step(t, "graph follows the YAML", func(t *testing.T) {
		if code, _ := postJSON(t, s, "/api/graph", `{"yaml":"input: {}"}`); code == 404 {
			t.Skip("the graph API (internal/studio/graph) is not in this build")
		}
		run(t, ctx, chromedp.Click(`.tabs button[data-tab="graph"]`))
		waitJS(t, ctx, 10*time.Second, `document.querySelector('#graph .node[data-component="kafka_sink"] .badge-exactly_once')`, `document.querySelector("#graph").innerText.slice(0, 500)`)
		waitJS(t, ctx, 5*time.Second, `document.querySelector('#graph .edge-exactly_once') && document.querySelector('#graph svg.links path.link-eos')`, `document.querySelector("#graph").innerText.slice(0, 500)`)
		// Clicking the sink jumps to its YAML.
		run(t, ctx, chromedp.Click(`#graph .node[data-component="kafka_sink"] > .node-head`))
		line := evalAs[string](t, ctx, `studio.view.state.doc.lineAt(studio.view.state.selection.main.head).text`)
		if strings.TrimSpace(line) != "kafka_sink:" {
			t.Fatalf("clicking the kafka_sink node put the cursor on %q", line)
		}
		takeScreenshot(t, ctx)
	})

	step(t, "form sets the guarantee back; lint and graph follow", func(t *testing.T) {
		run(t, ctx, chromedp.Click(`.tabs button[data-tab="form"]`))
		cursorAt(t, ctx, "            topic: quickstart", 14)
		sel := `#f-output-switch-cases-0-output-kafka_sink-delivery_guarantee`
		waitJS(t, ctx, 10*time.Second, fmt.Sprintf(`document.querySelector(%q) && document.querySelector(%q).value === "exactly_once"`, sel, sel), `document.querySelector("#form").innerText.slice(0, 300)`)
		eval(t, ctx, fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = "at_least_once"; s.dispatchEvent(new Event("change")); return true; })()`, sel), new(bool))
		waitJS(t, ctx, 5*time.Second, `studio.view.state.doc.toString().includes("            delivery_guarantee: at_least_once\n")`, "")
		waitLintSettled(t, ctx)
		if msgs := evalAs[[]string](t, ctx, `studio.lastLint.problems.map(p => p.message)`); len(msgs) != 0 {
			t.Fatalf("at_least_once still shows %v", msgs)
		}
		if code, _ := postJSON(t, s, "/api/graph", `{"yaml":"input: {}"}`); code == 404 {
			return
		}
		waitJS(t, ctx, 10*time.Second, `document.querySelector('#graph .node[data-component="kafka_sink"] .badge-at_least_once') && !document.querySelector('#graph .edge-exactly_once') && !document.querySelector('#graph svg.links path')`, `document.querySelector("#graph").innerText.slice(0, 500)`)
	})

	step(t, "run on the dev broker shows output messages", func(t *testing.T) {
		if code, _ := postJSON(t, s, "/api/test", `{"yaml":"input: {}"}`); code == 404 {
			t.Skip("the try-it API (internal/studio/tryrun) is not in this build")
		}
		run(t, ctx, chromedp.Click(`.tabs button[data-tab="tryit"]`), chromedp.Click(`#tryit button.run-dev`))
		waitJS(t, ctx, 90*time.Second, `document.querySelectorAll("#tryit tr.message").length >= 3`, `document.querySelector("#tryit").innerText.slice(0, 800)`)
		rows := evalAs[string](t, ctx, `document.querySelector("#tryit table.messages").innerText`)
		if !strings.Contains(rows, "order_id") {
			t.Fatalf("the output messages are not the quickstart's orders:\n%s", rows)
		}
		// With their metadata: generated orders carry demo_source, those
		// read back from the development broker kafka_topic.
		waitJS(t, ctx, 30*time.Second, `[...document.querySelectorAll("#tryit tr.message td.meta")].some(td => td.textContent.includes("kafka_topic=quickstart"))`, `document.querySelector("#tryit table.messages").innerText.slice(0, 800)`)
		if !strings.Contains(rows, "demo_source=generate") {
			t.Fatalf("the generated orders show no metadata:\n%s", rows)
		}
		// Live metrics arrive.
		waitJS(t, ctx, 30*time.Second, `document.querySelectorAll("#tryit .metrics .metric").length > 0`, `document.querySelector("#tryit").innerText.slice(0, 400)`)
		// A second window (same browser, so the same cookie) follows the
		// run that is alive: its messages are replayed there.
		tab, closeTab := chromedp.NewContext(ctx)
		// The first action on a tab's context opens the tab and ties it
		// to that context: this one, not a timeout's.
		if err := chromedp.Do(tab); err != nil {
			t.Fatal(err)
		}
		run(t, tab, chromedp.Navigate(s.Base+"/"))
		waitJS(t, tab, 30*time.Second, `document.body.dataset.ready === "true"`, "")
		run(t, tab, chromedp.Click(`.tabs button[data-tab="tryit"]`))
		waitJS(t, tab, 30*time.Second, `document.querySelectorAll("#tryit tr.message").length >= 3 && !document.querySelector("#tryit button.stop").disabled`, `document.querySelector("#tryit").innerText.slice(0, 400)`)
		closeTab()
		run(t, ctx, chromedp.Click(`#tryit button.stop`))
		waitJS(t, ctx, 30*time.Second, `document.querySelector("#tryit .run-state").dataset.state === "exited"`, `document.querySelector("#tryit .run-state").textContent`)
	})

	step(t, "try it: real brokers need a confirmation; unit tests run", func(t *testing.T) {
		if code, _ := postJSON(t, s, "/api/test", `{"yaml":"input: {}"}`); code == 404 {
			t.Skip("the try-it API (internal/studio/tryrun) is not in this build")
		}
		// The quickstart's brokers are 127.0.0.1:19192 (its default): the
		// page names them and starts nothing when the user cancels.
		before := evalAs[string](t, ctx, `document.querySelector("#tryit .run-state").textContent`)
		run(t, ctx, chromedp.Click(`#tryit button.run-real`))
		waitJS(t, ctx, 10*time.Second, `document.querySelector("#dialog").open`, "")
		if msg := evalAs[string](t, ctx, `document.querySelector("#dialog-text").textContent`); !strings.Contains(msg, "127.0.0.1:19192") {
			t.Fatalf("the confirmation does not name the brokers: %q", msg)
		}
		run(t, ctx, chromedp.Click(`#dialog button.dialog-cancel`))
		waitJS(t, ctx, 5*time.Second, `!document.querySelector("#dialog").open`, "")
		if after := evalAs[string](t, ctx, `document.querySelector("#tryit .run-state").textContent`); after != before {
			t.Fatalf("a cancelled run on real brokers changed the run state: %q -> %q", before, after)
		}
		run(t, ctx, chromedp.Click(`#tryit button.run-tests`))
		waitJS(t, ctx, 60*time.Second, `document.querySelectorAll("#tryit .tests .test").length === 2`, `document.querySelector("#tryit .tests").innerText`)
		res := evalAs[string](t, ctx, `document.querySelector("#tryit .tests").innerText`)
		if !strings.Contains(res, "tests passed") || strings.Count(res, "✓") != 2 {
			t.Fatalf("the quickstart's two unit tests do not both pass:\n%s", res)
		}
	})

	step(t, "save writes the file; a file changed on disk is not overwritten unasked", func(t *testing.T) {
		run(t, ctx, chromedp.Click(`#save`))
		waitJS(t, ctx, 10*time.Second, `document.querySelector("#status").textContent.startsWith("saved")`, `document.querySelector("#status").textContent`)
		onDisk, _ := os.ReadFile(file)
		if string(onDisk) != doc(t, ctx) || !strings.Contains(string(onDisk), "delivery_guarantee: at_least_once") {
			t.Fatalf("the file on disk is not the editor's text:\n%s", onDisk)
		}
		// Someone else changes the file; the editor changes too.
		theirs := strings.Replace(string(onDisk), "interval: 250ms", "interval: 1s", 1)
		if err := os.WriteFile(file, []byte(theirs), 0o644); err != nil {
			t.Fatal(err)
		}
		cursorAt(t, ctx, "commit_period: 1s", len("commit_period: 1"))
		run(t, ctx, chromedp.KeyEvent("0")) // 10s
		run(t, ctx, chromedp.Click(`#save`))
		waitJS(t, ctx, 10*time.Second, `document.querySelector("#dialog").open`, "")
		if msg := evalAs[string](t, ctx, `document.querySelector("#dialog-text").textContent`); !strings.Contains(msg, "changed on disk") {
			t.Fatalf("the dialog says %q", msg)
		}
		run(t, ctx, chromedp.Click(`#dialog button.dialog-cancel`))
		waitJS(t, ctx, 5*time.Second, `!document.querySelector("#dialog").open`, "")
		if got, _ := os.ReadFile(file); string(got) != theirs {
			t.Fatal("a cancelled save overwrote the file changed on disk")
		}
		// Asked again, the user overwrites.
		run(t, ctx, chromedp.Click(`#save`))
		waitJS(t, ctx, 10*time.Second, `document.querySelector("#dialog").open`, "")
		run(t, ctx, chromedp.Click(`#dialog button.dialog-yes`))
		deadline := time.Now().Add(10 * time.Second)
		for {
			got, _ := os.ReadFile(file)
			if string(got) == doc(t, ctx) && strings.Contains(string(got), "commit_period: 10s") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the confirmed save did not write the editor's text:\n%s", got)
			}
			time.Sleep(50 * time.Millisecond) // polling the file, with the deadline above
		}
	})

	step(t, "refused: no token, another site, a path outside the directories", func(t *testing.T) {
		for _, p := range []string{"/", "/api/files", "/api/file?path=" + file, "/api/schema", "/api/run/r1", "/api/run/r1/events", "/dist/studio.js"} {
			if code, body := get(t, s.Base+p, nil); code != 401 {
				t.Errorf("GET %s without the token: %d, want 401 (%s)", p, code, body)
			}
		}
		code, _ := postJSON(t, &studioProc{Base: s.Base}, "/api/lint", "input: {}")
		if code != 401 {
			t.Errorf("POST /api/lint without the token: %d, want 401", code)
		}
		if code, _ := get(t, s.Base+"/api/files", map[string]string{"X-Connectd-Studio-Token": s.Token, "Origin": "http://attacker.example"}); code != 403 {
			t.Errorf("a cross-site request: %d, want 403", code)
		}
		// From the page itself (its cookie carries the token): paths
		// outside the directory, by absolute path, `..` and symlink.
		link := filepath.Join(dir, "link.yaml")
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{outside, filepath.Join(dir, "..", filepath.Base(filepath.Dir(outside)), "secret.yaml"), link, "/etc/passwd"} {
			st := evalAs[int](t, ctx, fmt.Sprintf(`fetch("/api/file?path=" + encodeURIComponent(%q)).then(r => r.status)`, p))
			if st != 403 {
				t.Errorf("the page opening %s: %d, want 403", p, st)
			}
			st = evalAs[int](t, ctx, fmt.Sprintf(`fetch("/api/file", {method: "PUT", headers: {"Content-Type": "application/json"}, body: JSON.stringify({path: %q, content: "x: 1\n", force: true})}).then(r => r.status)`, p))
			if st != 403 {
				t.Errorf("the page saving %s: %d, want 403", p, st)
			}
		}
		if got, _ := os.ReadFile(outside); string(got) != "secret: 1\n" {
			t.Fatalf("the file outside the directory changed: %q", got)
		}
	})
}

// waitLintSettled waits until the last lint is of the editor's current
// text (its diagnostics are then drawn).
func waitLintSettled(t *testing.T, ctx context.Context) {
	t.Helper()
	waitJS(t, ctx, 10*time.Second, `studio.lastLint.text === studio.view.state.doc.toString()`, `studio.lastLint.problems`)
}

var lintLine = regexp.MustCompile(`\((\d+),(\d+)\) `)

// cliLintLines runs `connectd lint` on text and returns the lines it
// reports, sorted, each once.
func cliLintLines(t *testing.T, text string) []int {
	t.Helper()
	f := filepath.Join(t.TempDir(), "buffer.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(connectdBin(t), "lint", f).CombinedOutput()
	seen := map[int]bool{}
	var lines []int
	for _, m := range lintLine.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[1])
		if !seen[n] {
			seen[n] = true
			lines = append(lines, n)
		}
	}
	sort.Ints(lines)
	return lines
}

func intsJSON(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func containsSub(xs []string, sub string) bool {
	for _, x := range xs {
		if strings.Contains(x, sub) {
			return true
		}
	}
	return false
}

// step runs one step of a walk-through as a subtest; a failed step ends the
// walk (the later steps build on its result).
func step(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	if t.Failed() {
		return
	}
	if !t.Run(name, f) {
		t.FailNow()
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
