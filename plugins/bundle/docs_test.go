package bundle_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/docsgen"
)

// The component pages in docs/components are what the specs generate now:
// a spec changed without `make docs` fails here.
func TestComponentDocsAreCurrent(t *testing.T) {
	t.Parallel()
	stale, err := docsgen.Stale(filepath.Join("..", "..", "docs", "components"))
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("docs/components is out of date with the component specs; run `make docs` and commit the result:\n  %s",
			strings.Join(stale, "\n  "))
	}
}

// Every component of the bundle has a page, and the index links them all.
func TestEveryComponentHasAPage(t *testing.T) {
	t.Parallel()
	files, err := docsgen.Files()
	if err != nil {
		t.Fatal(err)
	}
	components := docsgen.Bundle()
	if len(components) < 7 {
		t.Fatalf("bundle components %v, want at least the seven of the bundle", components)
	}
	index := string(files[docsgen.IndexFile])
	for _, c := range components {
		page, ok := files[c.File()]
		if !ok {
			t.Errorf("%s has no page", c.Name)
			continue
		}
		if !strings.Contains(index, "("+c.File()+")") {
			t.Errorf("the index does not link %s", c.File())
		}
		if !strings.Contains(string(page), "## Fields") {
			t.Errorf("%s's page has no fields section", c.Name)
		}
	}
}
