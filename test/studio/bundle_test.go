package studio

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestBundleIsCurrent rebuilds the front end as CI would, from the
// lockfile (`npm ci`, then esbuild), and fails when the committed bundle
// (internal/studio/web/dist/studio.js, embedded in the binary) is not what
// the sources give: after changing web/src, run `make studio-web` and
// commit dist/. Without npm it skips, unless CONNECTD_REQUIRE_NODE=1.
func TestBundleIsCurrent(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CONNECTD_REQUIRE_NODE") == "1" {
			t.Fatal("CONNECTD_REQUIRE_NODE=1 but npm is not on PATH (apt-get install nodejs npm)")
		}
		t.Skip("npm is not on PATH; CONNECTD_REQUIRE_NODE=1 makes this a failure")
	}
	web := filepath.Join(repoRoot(), "internal", "studio", "web")
	tmp := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join(web, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("cp", "-r", filepath.Join(web, "src"), filepath.Join(tmp, "src")).CombinedOutput(); err != nil {
		t.Fatalf("copying src: %v %s", err, out)
	}
	for _, args := range [][]string{{"ci", "--no-audit", "--no-fund"}, {"run", "build"}} {
		start := time.Now()
		cmd := exec.Command(npm, args...)
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm %v: %v\n%s", args, err, out)
		}
		t.Logf("npm %v: %v", args, time.Since(start).Round(time.Millisecond))
	}
	fresh, err := os.ReadFile(filepath.Join(tmp, "dist", "studio.js"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join(web, "dist", "studio.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatalf("internal/studio/web/dist/studio.js (%d bytes) is not what `npm ci && npm run build` gives from web/src (%d bytes): run `make studio-web` and commit dist/", len(committed), len(fresh))
	}
}
