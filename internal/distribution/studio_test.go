package distribution

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/studio"
)

// The studio's catalog and graph views read a catalog file a pipeline
// names only under the directories the studio was started with, as its
// files API does: a catalog elsewhere is the catalog field's error, and
// its text never reaches the page.
func TestStudioMountsConfineCatalogFiles(t *testing.T) {
	t.Parallel()
	allowed, outside := t.TempDir(), t.TempDir()
	ddl := "CREATE TABLE secret_table (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'k:9092', 'format' = 'json')"
	for _, dir := range []string{allowed, outside} {
		if err := os.WriteFile(filepath.Join(dir, "tables.sql"), []byte(ddl), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	allow, err := studio.Confine([]string{allowed})
	if err != nil {
		t.Fatal(err)
	}
	mounts := map[string]http.Handler{}
	for _, m := range studioMounts(allow) {
		mounts[m.Pattern] = m.Handler
		if m.Close != nil {
			defer m.Close()
		}
	}
	post := func(pattern, dir string) string {
		t.Helper()
		yaml := `{"yaml": "input:\n  kafka_source:\n    catalog: ` + filepath.Join(dir, "tables.sql") + `\n    table: secret_table\noutput:\n  drop: {}\n"}`
		req := httptest.NewRequest(http.MethodPost, strings.TrimPrefix(pattern, "POST "), strings.NewReader(yaml))
		rec := httptest.NewRecorder()
		mounts[pattern].ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", pattern, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	for _, pattern := range []string{"POST /api/catalog", "POST /api/graph"} {
		if in := post(pattern, allowed); !strings.Contains(in, `"id"`) || strings.Contains(in, "outside the directories") {
			t.Errorf("%s: a catalog under the allowed directory is not read: %s", pattern, in)
		}
		out := post(pattern, outside)
		if !strings.Contains(out, "outside the directories") {
			t.Errorf("%s: a catalog outside the allowed directories is read: %s", pattern, out)
		}
		if strings.Contains(out, `"BIGINT"`) {
			t.Errorf("%s: the outside catalog's columns reached the answer: %s", pattern, out)
		}
	}
}
