package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/eventually"
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
	eventually.NoError(t, 30*time.Second, "an input_received counter at /metrics", func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err != nil {
			return stateWithLogs(err.Error(), logs)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !received.MatchString(string(b)) {
			return stateWithLogs(fmt.Sprintf("%s, body:\n%s", resp.Status, b), logs)
		}
		if ct := resp.Header.Get("Content-Type"); !regexp.MustCompile(`^text/plain`).MatchString(ct) {
			t.Errorf("Content-Type %q, want the Prometheus text format", ct)
		}
		return nil
	})
}

// scrape returns the Prometheus text format served at port's /metrics.
func scrape(port int) (string, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
