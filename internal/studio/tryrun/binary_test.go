package tryrun

import (
	"path/filepath"
	"testing"

	"github.com/connectd/connectd/internal/bintest"
)

// connectdBin is the binary the runs use: $CONNECTD_BIN (set by `make
// test`), or one built once for this test process.
func connectdBin(t testing.TB) string {
	return bintest.Connectd(t)
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
