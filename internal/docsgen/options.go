package docsgen

import (
	"bytes"
	"os"

	"github.com/connectd/connectd/schema"
)

// FlinkOptionsPath is where `make docs` writes the "Flink option ->
// connectd" table, relative to the repository root.
const FlinkOptionsPath = "docs/flink-options.md"

// FlinkOptions returns the page of every Flink WITH option: what connectd
// does with it, or why it refuses it (schema.FlinkOptionsMarkdown).
func FlinkOptions() []byte { return []byte(schema.FlinkOptionsMarkdown()) }

// WriteFlinkOptions writes the page to path.
func WriteFlinkOptions(path string) error {
	return os.WriteFile(path, FlinkOptions(), 0o644)
}

// FlinkOptionsStale reports whether the page at path differs from what the
// option tables generate now (a missing page is stale).
func FlinkOptionsStale(path string) (bool, error) {
	have, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return !bytes.Equal(have, FlinkOptions()), nil
}
