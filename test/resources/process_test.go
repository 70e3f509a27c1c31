package resources

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/bintest"
)

// connectdBin returns the binary under test: $CONNECTD_BIN (set by `make
// test`), or one built once for this test process.
func connectdBin(t testing.TB) string {
	return bintest.Connectd(t)
}

// runCLI runs connectd with args from the repository root and returns its
// combined output and exit code.
func runCLI(t *testing.T, timeout time.Duration, args ...string) (string, int) {
	t.Helper()
	bin := connectdBin(t) // built before the clock starts
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = repoRoot(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running connectd %v: %v", args, err)
	}
	return out.String(), 0
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// process is a `connectd run` started by a test; it is stopped (SIGTERM,
// then SIGKILL) at the end of the test.
type process struct {
	cmd  *exec.Cmd
	logs *lockedBuffer
	port int
}

// startConnectd runs config with its HTTP server (and /metrics) on port.
func startConnectd(t *testing.T, port int, config string) *process {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pipeline.yaml")
	config = fmt.Sprintf("http:\n  address: 127.0.0.1:%d\n", port) + config
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startProcess(t, nil, "run", path)
	p.port = port
	return p
}

// startProcess runs connectd with args from the repository root, with env
// added to this process's environment.
func startProcess(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	p := &process{logs: &lockedBuffer{}}
	p.cmd = exec.Command(connectdBin(t), args...)
	p.cmd.Dir = repoRoot(t)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("connectd %s logged:\n%s", strings.Join(args, " "), lastLines(p.logs.String(), 40))
		}
	})
	return p
}

// scrape returns the Prometheus text served at the process's /metrics.
func (p *process) scrape() (string, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.port))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return string(b), err
}

// sampleLabels returns the names of the samples in a Prometheus text
// exposition (a summary's `x`, `x_sum` and `x_count` are three names), each
// with the label names its samples carry.
func sampleLabels(text string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.IndexAny(line, "{ ")
		if i <= 0 {
			continue
		}
		name := line[:i]
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		if line[i] == '{' {
			for _, m := range reMatcherKey.FindAllStringSubmatch(reString.ReplaceAllString(line[i:], `""`), -1) {
				out[name][m[1]] = true
			}
		}
	}
	return out
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
