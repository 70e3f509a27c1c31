package schema

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/kafka-properties.md from the property tables")

// docs/kafka-properties.md is generated from the property tables, so the
// docs list exactly the properties connectd applies and refuses.
func TestPropertiesDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "kafka-properties.md")
	want := PropertiesMarkdown()
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is out of date: run go test ./schema -run TestPropertiesDoc -update", path)
	}
}
