// Package e2e runs the built connectd binary as a user would: the CLI
// subcommands, the YAML files in config/, and SIGKILL-and-restart runs against
// a real Kafka broker.
package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/bintest"
)

// connectdBin returns the binary under test: $CONNECTD_BIN (set by
// `make test`), or one built once for this test process.
func connectdBin(t testing.TB) string {
	return bintest.Connectd(t)
}

// repoRoot is the module root, where config/ lives.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// runCLI runs connectd with args and returns its combined output and exit code.
func runCLI(t testing.TB, timeout time.Duration, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, connectdBin(t), args...)
	cmd.Dir = repoRoot(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running connectd %v: %v", args, err)
	}
	return out.String(), code
}

// writeFile writes content into a file in a fresh temp dir and returns its path.
func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
