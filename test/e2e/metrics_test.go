package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"testing"
	"time"
)

// TestPrometheusMetricsServed runs the binary with no metrics section: the
// default exporter must be prometheus, serving Benthos and connectd metrics at
// /metrics on the Benthos HTTP server.
func TestPrometheusMetricsServed(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	conf := writeFile(t, "metrics.yaml", fmt.Sprintf(`
http:
  address: 127.0.0.1:%d
logger:
  level: warn
input:
  generate:
    interval: 10ms
    mapping: root.n = counter()
output:
  drop: {}
`, port))
	cmd := exec.Command(connectdBin(t), "run", conf)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	received := regexp.MustCompile(`(?m)^input_received\{label="",path="root\.input"\} ([1-9][0-9]*)$`)
	deadline := time.Now().Add(30 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if resp.StatusCode == http.StatusOK && received.MatchString(body) {
				if ct := resp.Header.Get("Content-Type"); !regexp.MustCompile(`^text/plain`).MatchString(ct) {
					t.Errorf("Content-Type %q, want the Prometheus text format", ct)
				}
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no input_received counter at /metrics within 30s; last body:\n%s\nlogs:\n%s", body, logs.String())
}
