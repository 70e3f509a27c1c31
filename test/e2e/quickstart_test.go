package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestQuickstartOnDevBroker runs config/quickstart.yaml as `make run` does and
// waits for records that went through kafka_sink and came back out of
// kafka_source.
func TestQuickstartOnDevBroker(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	cmd := exec.Command(connectdBin(t), "run", "--dev-broker", fmt.Sprintf("127.0.0.1:%d", port), "--dev-broker-topics", "quickstart", "config/quickstart.yaml")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), fmt.Sprintf("CONNECTD_BROKERS=127.0.0.1:%d", port))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	line := regexp.MustCompile(`^quickstart\[\d+\]@\d+ key=(ada|grace|linus|ken) source=generate \{"amount_cents":\d+,"order_id":\d+,"user":"(ada|grace|linus|ken)"\}$`)
	logLine := regexp.MustCompile(`^time=".*" level=`)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(60 * time.Second)
	seen := 0
	for seen < 5 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("connectd exited after %d records; stderr:\n%s", seen, stderr.String())
			}
			if logLine.MatchString(l) {
				continue // Benthos logs to stdout too
			}
			if !line.MatchString(l) {
				t.Fatalf("unexpected output line %q", l)
			}
			seen++
		case <-deadline:
			t.Fatalf("saw %d records in 60s; stderr:\n%s", seen, stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for range lines {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("connectd did not exit cleanly on SIGTERM: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("connectd did not stop within 30s of SIGTERM")
	}
}
