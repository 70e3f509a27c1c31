// Package interop checks connectd against Apache Flink itself (issue 14,
// "Flink is the referee"): Flink SQL from Maven Central in a local
// MiniCluster (scripts/flink-sql.sh, interop/flink) writes and reads the
// same `CREATE TABLE` as connectd on the real broker, and the rows must be
// identical. `make interop` runs it.
package interop

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/bintest"
)

// Environment of the schema registry (`scripts/registry.sh env`).
const (
	envRegistryURL     = "CONNECTD_SCHEMA_REGISTRY_URL"
	envRequireRegistry = "CONNECTD_REQUIRE_REGISTRY"
)

// connectdRunTimeout bounds one `connectd run` of a test: a bounded read or
// a write of a few rows, on a loaded machine.
const connectdRunTimeout = 3 * time.Minute

// connectdBin returns $CONNECTD_BIN, or builds the binary once into a temp
// dir.
func connectdBin(t testing.TB) string {
	return bintest.Connectd(t)
}

// repoRoot is the checkout's top directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// runConnectd runs `bin run conf`, which must exit 0 on its own; the error
// carries connectd's log. Safe to call from any goroutine.
func runConnectd(bin, dir, conf string) error {
	ctx, cancel := context.WithTimeout(context.Background(), connectdRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", conf)
	cmd.Dir = dir
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("connectd run %s: %w after %v (want exit 0)\n%s", conf, err, time.Since(start).Round(time.Millisecond), logs.String())
	}
	return nil
}

// registryURL returns $CONNECTD_SCHEMA_REGISTRY_URL once the registry
// answers GET /subjects; it skips the test otherwise, or fails it when
// CONNECTD_REQUIRE_REGISTRY=1.
func registryURL(t testing.TB) string {
	t.Helper()
	url := strings.TrimRight(strings.TrimSpace(os.Getenv(envRegistryURL)), "/")
	unavailable := func(msg string) {
		t.Helper()
		if os.Getenv(envRequireRegistry) == "1" {
			t.Fatalf("%s (%s=1, so this is a failure)", msg, envRequireRegistry)
		}
		t.Skip(msg)
	}
	if url == "" {
		unavailable("schema registry: " + envRegistryURL + ` is not set; run "scripts/registry.sh up && eval \"$(scripts/registry.sh env)\""`)
	}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url + "/subjects")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %s", resp.Status)
		}
	}
	if err != nil {
		unavailable(fmt.Sprintf("schema registry: %s=%s does not answer GET /subjects: %v; run scripts/registry.sh up", envRegistryURL, url, err))
	}
	return url
}

// deleteSubjectsAtCleanup deletes the subjects of topic's key and value
// (soft, then permanently) when the test ends.
func deleteSubjectsAtCleanup(t testing.TB, url, topic string) {
	t.Cleanup(func() {
		c := http.Client{Timeout: 10 * time.Second}
		for _, s := range []string{topic + "-key", topic + "-value"} {
			for _, q := range []string{"", "?permanent=true"} {
				req, err := http.NewRequest(http.MethodDelete, url+"/subjects/"+s+q, nil)
				if err != nil {
					continue
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Logf("delete subject %s: %v", s, err)
					continue
				}
				resp.Body.Close()
			}
		}
	})
}
