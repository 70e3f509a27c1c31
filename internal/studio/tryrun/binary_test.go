package tryrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildOut  []byte
)

// connectdBin is the binary the runs use: $CONNECTD_BIN (set by `make
// test`), or one built once for this test process.
func connectdBin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CONNECTD_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "connectd-tryrun-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "connectd")
		cmd := exec.Command("go", "build", "-o", builtBin, "github.com/connectd/connectd/cmd/connectd")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building connectd: %v\n%s", buildErr, buildOut)
	}
	return builtBin
}

// repoRoot is the module root, where config/ lives.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}
