package docsgen

import (
	"path/filepath"
	"testing"
)

// docs/flink-options.md is what the option tables generate now: an option
// added or changed without `make docs` fails here.
func TestFlinkOptionsPageIsCurrent(t *testing.T) {
	t.Parallel()
	stale, err := FlinkOptionsStale(filepath.Join("..", "..", FlinkOptionsPath))
	if err != nil {
		t.Fatal(err)
	}
	if stale {
		t.Errorf("%s is out of date with schema/options.go and schema/optiondocs.go; run `make docs` and commit the result", FlinkOptionsPath)
	}
}
