// Package studio tests `connectd studio` in a real headless Chromium
// (Debian's chromium, driven with chromedp) against the built binary:
// the quickstart loads, a field completes, a typo shows its diagnostic at
// the line `connectd lint` gives and goes when fixed, the form switches
// the delivery guarantee keeping comments, the graph follows, a run on the
// development broker shows output messages, saves write the file (and a
// file changed on disk is not overwritten unasked), and requests without
// the token or for paths outside the given directories are refused.
//
// Without chromium the browser tests skip, unless CONNECTD_REQUIRE_BROWSER=1
// (make test, .ci/run) makes them fail.
package studio

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/connectd/connectd/internal/bintest"
)

// connectdBin returns the binary under test: $CONNECTD_BIN (set by
// `make test`), or one built once for this test process.
func connectdBin(t testing.TB) string {
	return bintest.Connectd(t)
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// chromium returns the browser's path, or skips (fails under
// CONNECTD_REQUIRE_BROWSER=1) when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CONNECTD_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CONNECTD_REQUIRE_BROWSER") == "1" {
		t.Fatal("CONNECTD_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install chromium); CONNECTD_REQUIRE_BROWSER=1 makes this a failure")
	return ""
}

// studioProc is a running `connectd studio`.
type studioProc struct {
	URL   string // with the token
	Base  string // http://127.0.0.1:PORT
	Token string
	cmd   *exec.Cmd
}

var urlLine = regexp.MustCompile(`connectd studio: (http://[^/\s]+)/\?token=([0-9a-f]+)`)

// startStudio runs the binary's studio on the given paths and waits for
// the URL it prints.
func startStudio(t *testing.T, dir string, paths ...string) *studioProc {
	t.Helper()
	cmd := exec.Command(connectdBin(t), append([]string{"studio", "--address", "127.0.0.1:0"}, paths...)...)
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := urlLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case m := <-found:
		return &studioProc{URL: m[1] + "/?token=" + m[2], Base: m[1], Token: m[2], cmd: cmd}
	case <-time.After(30 * time.Second):
		t.Fatalf("connectd studio printed no URL in 30s; stderr: %s", stderr.String())
	}
	return nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// browser starts headless Chromium and returns a tab's context.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.WindowSize(1440, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

func run(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatal(err)
	}
}

// evalAs evaluates a JavaScript expression in the page (awaiting a
// promise) and decodes its value.
func evalAs[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// eval evaluates a JavaScript expression into out.
func eval[T any](t *testing.T, ctx context.Context, expr string, out *T) {
	t.Helper()
	*out = evalAs[T](t, ctx, expr)
}

// waitJS polls a JavaScript condition until it is true or the deadline
// passes; what is returns the state for the failure message.
func waitJS(t *testing.T, ctx context.Context, timeout time.Duration, cond, what string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var ok bool
		eval(t, ctx, "!!("+cond+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var state any
			if what != "" {
				eval(t, ctx, what, &state)
			}
			t.Fatalf("after %v: still not %s (state: %v)", timeout, cond, state)
		}
		<-tick.C
	}
}

// doc returns the editor's text.
func doc(t *testing.T, ctx context.Context) string {
	var s string
	eval(t, ctx, "studio.view.state.doc.toString()", &s)
	return s
}

// cursorAt puts the cursor at the offset of needle in the editor (plus
// delta) and focuses the editor.
func cursorAt(t *testing.T, ctx context.Context, needle string, delta int) {
	t.Helper()
	var ok bool
	js, _ := json.Marshal(needle)
	eval(t, ctx, fmt.Sprintf(`(() => { const v = studio.view; const i = v.state.doc.toString().indexOf(%s); if (i < 0) return false;
		v.dispatch({selection: {anchor: i + %d}, scrollIntoView: true}); v.focus(); return true; })()`, js, delta), &ok)
	if !ok {
		t.Fatalf("%q is not in the editor", needle)
	}
}

// errorLines returns the lines of the diagnostics drawn in the editor.
const errorLinesJS = `[...document.querySelectorAll(".cm-lintRange-error")].map(e => studio.view.state.doc.lineAt(studio.view.posAtDOM(e)).number)`

func get(t *testing.T, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// postJSON posts body to the studio with its token (none when s.Token is
// empty) and returns the status and answer.
func postJSON(t *testing.T, s *studioProc, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.Base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if s.Token != "" {
		req.Header.Set("X-Connectd-Studio-Token", s.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// takeScreenshot saves the page as PNG: into the test's log directory,
// and to $CONNECTD_STUDIO_SCREENSHOT when set (`make studio-screenshot`
// writes docs/studio.png that way).
func takeScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	out := os.Getenv("CONNECTD_STUDIO_SCREENSHOT")
	if out == "" {
		out = filepath.Join(t.TempDir(), "studio.png")
	} else if !filepath.IsAbs(out) {
		out = filepath.Join(repoRoot(), out)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", out, len(png))
}

// press sends a special key (Enter, Backspace) as a key down and up with
// no character event: CodeMirror acts on the key down, and Chromium would
// otherwise also insert the key's character ("\r").
func press(key rune) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, k := range kb.Encode(key) {
			if k.Type == kb.KeyChar {
				continue
			}
			if k.Type == kb.KeyDown {
				k.Type = kb.KeyRawDown
				k.Text, k.UnmodifiedText = "", ""
			}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, *k); err != nil {
				return err
			}
		}
		return nil
	})
}
