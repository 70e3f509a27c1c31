// Package bintest gives tests the connectd binary they run as a user
// would: $CONNECTD_BIN (set by `make test` to the binary it built), or one
// built once per test process.
package bintest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// EnvBin names the binary under test.
const EnvBin = "CONNECTD_BIN"

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// Connectd returns the binary under test: $CONNECTD_BIN, or one built once
// for this test process into a temp dir (CGO off, as `make build`).
func Connectd(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvBin); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "connectd-test-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "connectd")
		cmd := exec.Command("go", "build", "-o", builtBin, "github.com/connectd/connectd/cmd/connectd")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building connectd: %v", buildErr)
	}
	return builtBin
}
