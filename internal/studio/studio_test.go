package studio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const testToken = "0123456789abcdef0123456789abcdef"

// newTestServer serves the studio for the given paths on a real loopback
// listener and returns its base URL.
func newTestServer(t *testing.T, paths ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Paths: paths}, ln.Addr(), testToken)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func do(t *testing.T, method, url string, body []byte, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp, buf.Bytes()
}

var auth = map[string]string{TokenHeader: testToken}

func TestGuard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(file, []byte("input: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := newTestServer(t, dir)
	host := strings.TrimPrefix(base, "http://")
	_, port, _ := net.SplitHostPort(host)
	save := func() []byte {
		b, _ := json.Marshal(saveRequest{Path: file, Content: "changed: true\n", Force: true})
		return b
	}
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		want   int
	}{
		{"no token", "GET", "/api/files", nil, 401},
		{"no token on the page", "GET", "/", nil, 401},
		{"no token, save", "PUT", "/api/file", nil, 401},
		{"wrong token", "GET", "/api/files", map[string]string{TokenHeader: strings.Repeat("0", 32)}, 401},
		{"wrong cookie", "GET", "/api/files", map[string]string{"Cookie": "connectd_studio_" + port + "=nope"}, 401},
		{"header token", "GET", "/api/files", auth, 200},
		{"cookie token", "GET", "/api/files", map[string]string{"Cookie": "connectd_studio_" + port + "=" + testToken}, 200},
		{"URL token on the page: cookie and redirect", "GET", "/?token=" + testToken, nil, 303},
		{"rebound DNS name", "GET", "/api/files", map[string]string{TokenHeader: testToken, "Host": "attacker.example:" + port}, 403},
		{"other port", "GET", "/api/files", map[string]string{TokenHeader: testToken, "Host": "127.0.0.1:1"}, 403},
		{"localhost", "GET", "/api/files", map[string]string{TokenHeader: testToken, "Host": "localhost:" + port}, 200},
		{"cross-site origin", "PUT", "/api/file", map[string]string{TokenHeader: testToken, "Origin": "http://attacker.example"}, 403},
		{"null origin", "PUT", "/api/file", map[string]string{TokenHeader: testToken, "Origin": "null"}, 403},
		{"https origin of the same host", "PUT", "/api/file", map[string]string{TokenHeader: testToken, "Origin": "https://" + host}, 403},
		{"cross-site fetch metadata", "PUT", "/api/file", map[string]string{TokenHeader: testToken, "Sec-Fetch-Site": "cross-site"}, 403},
		{"same origin", "GET", "/api/files", map[string]string{TokenHeader: testToken, "Origin": "http://" + host}, 200},
	}
	for _, c := range cases {
		var body []byte
		if c.method == "PUT" {
			body = save()
		}
		resp, out := do(t, c.method, base+c.path, body, c.hdr)
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, resp.StatusCode, c.want, out)
		}
		if c.want == 303 {
			if loc := resp.Header.Get("Location"); loc != "/" {
				t.Errorf("%s: redirect to %q, want / (the token out of the address bar)", c.name, loc)
			}
			ck := resp.Cookies()
			if len(ck) != 1 || ck[0].Value != testToken || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode {
				t.Errorf("%s: cookies %v, want one HttpOnly SameSite=Strict cookie with the token", c.name, ck)
			}
		}
	}
	// None of the refused saves touched the file.
	if data, _ := os.ReadFile(file); string(data) != "input: {}\n" {
		t.Fatalf("a refused request changed the file: %q", data)
	}
}

func TestFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.yaml")
	must(t, os.WriteFile(secret, []byte("secret: 1\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	file := filepath.Join(root, "sub", "p.yaml")
	must(t, os.WriteFile(file, []byte("# keep\ninput: {}\n"), 0o644))
	must(t, os.Symlink(secret, filepath.Join(root, "link.yaml")))
	must(t, os.Symlink(outside, filepath.Join(root, "linkdir")))
	base := newTestServer(t, root)

	// Listing: the file, not the symlink that leaves the root.
	_, out := do(t, "GET", base+"/api/files", nil, auth)
	var l listing
	must(t, json.Unmarshal(out, &l))
	if len(l.Files) != 1 || l.Files[0] != file {
		t.Fatalf("listed %v, want only %s", l.Files, file)
	}

	for _, p := range []string{
		secret,
		filepath.Join(root, "..", filepath.Base(outside), "secret.yaml"),
		filepath.Join(root, "link.yaml"),
		filepath.Join(root, "linkdir", "secret.yaml"),
		"sub/p.yaml",
		"/etc/passwd",
	} {
		resp, body := do(t, "GET", base+"/api/file?path="+p, nil, auth)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("open %s: status %d, want 403 (%s)", p, resp.StatusCode, body)
		}
		b, _ := json.Marshal(saveRequest{Path: p, Content: "x: 1\n", Force: true})
		resp, body = do(t, "PUT", base+"/api/file", b, auth)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("save %s: status %d, want 403 (%s)", p, resp.StatusCode, body)
		}
	}
	if data, _ := os.ReadFile(secret); string(data) != "secret: 1\n" {
		t.Fatalf("a file outside the root was written: %q", data)
	}

	// Open, save with the version loaded, then a stale save gets 409.
	resp, out := do(t, "GET", base+"/api/file?path="+file, nil, auth)
	var doc fileDoc
	must(t, json.Unmarshal(out, &doc))
	if resp.StatusCode != 200 || doc.Content != "# keep\ninput: {}\n" || doc.Version == "" {
		t.Fatalf("open: %d %+v", resp.StatusCode, doc)
	}
	b, _ := json.Marshal(saveRequest{Path: file, Content: "# keep\ninput: {generate: {}}\n", Version: doc.Version})
	resp, out = do(t, "PUT", base+"/api/file", b, auth)
	if resp.StatusCode != 200 {
		t.Fatalf("save: %d %s", resp.StatusCode, out)
	}
	// The file changes on disk behind the editor's back.
	must(t, os.WriteFile(file, []byte("# someone else\n"), 0o644))
	resp, out = do(t, "PUT", base+"/api/file", b, auth)
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("stale save: status %d, want 409 (%s)", resp.StatusCode, out)
	}
	if data, _ := os.ReadFile(file); string(data) != "# someone else\n" {
		t.Fatalf("a stale save overwrote the file: %q", data)
	}
	// The user confirmed: force.
	b, _ = json.Marshal(saveRequest{Path: file, Content: "mine: 1\n", Version: doc.Version, Force: true})
	if resp, out = do(t, "PUT", base+"/api/file", b, auth); resp.StatusCode != 200 {
		t.Fatalf("forced save: %d %s", resp.StatusCode, out)
	}
	if data, _ := os.ReadFile(file); string(data) != "mine: 1\n" {
		t.Fatalf("forced save wrote %q", data)
	}
	// A new file may be created under the root, only as a config or DDL.
	nf := filepath.Join(root, "new.yaml")
	b, _ = json.Marshal(saveRequest{Path: nf, Content: "a: 1\n"})
	if resp, out = do(t, "PUT", base+"/api/file", b, auth); resp.StatusCode != 200 {
		t.Fatalf("new file: %d %s", resp.StatusCode, out)
	}
	b, _ = json.Marshal(saveRequest{Path: filepath.Join(root, "run.sh"), Content: "rm -rf /\n"})
	if resp, _ = do(t, "PUT", base+"/api/file", b, auth); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("saving a .sh: status %d, want 403", resp.StatusCode)
	}
}

func TestFileGivenMakesItsDirectoryTheRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	file := filepath.Join(root, "one.yaml")
	must(t, os.WriteFile(file, []byte("a: 1\n"), 0o644))
	f, err := newFiles([]string{file})
	must(t, err)
	if len(f.roots) != 1 || f.roots[0] != root || len(f.open) != 1 || f.open[0] != file {
		t.Fatalf("roots %v open %v", f.roots, f.open)
	}
	if _, err := newFiles([]string{filepath.Join(root, "missing.yaml")}); err == nil {
		t.Fatal("a path that does not exist was accepted")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestServeLoopbackUnlessAllowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	// A context that has ended: were the address served, Serve would
	// return at once without an error.
	ended, end := context.WithCancel(context.Background())
	end()
	err := Serve(ended, "0.0.0.0:0", false, Options{Paths: []string{dir}}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--allow-remote") {
		t.Fatalf("a non-loopback address without --allow-remote: %v", err)
	}
	if out.Len() != 0 {
		t.Fatalf("printed a URL for a refused address: %q", out.String())
	}

	// On loopback it prints the URL with a token, serves it, and stops
	// with its context.
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, "127.0.0.1:0", false, Options{Paths: []string{dir}}, pw, &errOut) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^connectd studio: (http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]{32})\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("printed %q, want the loopback URL with a 128-bit token", line)
	}
	if resp, body := do(t, "GET", m[1]+"/api/files", nil, map[string]string{TokenHeader: m[2]}); resp.StatusCode != 200 {
		t.Fatalf("with the printed token: %d %s", resp.StatusCode, body)
	}
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop with its context")
	}
}

// TestGuardHostOnRemoteBind: with --allow-remote (a non-loopback bind), a
// Host that is an IP literal with the server's port is accepted (it cannot
// be rebound), a DNS name still is not.
func TestGuardHostOnRemoteBind(t *testing.T) {
	t.Parallel()
	g := newGuard(testToken, &net.TCPAddr{IP: net.IPv4zero, Port: 4196}, http.NotFoundHandler())
	for host, want := range map[string]bool{
		"192.0.2.7:4196":      true,
		"[2001:db8::1]:4196":  true,
		"localhost:4196":      true,
		"192.0.2.7:4197":      false,
		"studio.example:4196": false,
		"192.0.2.7":           false,
	} {
		if got := g.hostAllowed(host); got != want {
			t.Errorf("Host %q on a remote bind: allowed %v, want %v", host, got, want)
		}
	}
	lo := newGuard(testToken, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4196}, http.NotFoundHandler())
	for host, want := range map[string]bool{"127.0.0.1:4196": true, "[::1]:4196": true, "localhost:4196": true, "LOCALHOST:4196": true, "192.0.2.7:4196": false} {
		if got := lo.hostAllowed(host); got != want {
			t.Errorf("Host %q on loopback: allowed %v, want %v", host, got, want)
		}
	}
}
