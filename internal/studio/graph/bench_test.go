package graph

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/connectd/connectd/internal/studio/catalog"
)

// BenchmarkBuildFlinkSQL is the graph of config/flink_sql.yaml (three
// inline DDL tables resolved), as the studio computes it after each edit.
func BenchmarkBuildFlinkSQL(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "flink_sql.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	env := catalog.Env{}
	b.ReportAllocs()
	for b.Loop() {
		if g := Build(src, env); len(g.Nodes) == 0 {
			b.Fatal("no nodes")
		}
	}
}
