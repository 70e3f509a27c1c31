package distribution

import (
	"os"

	"github.com/connectd/connectd/internal/studio"
	"github.com/connectd/connectd/internal/studio/catalog"
	"github.com/connectd/connectd/internal/studio/graph"
	"github.com/connectd/connectd/internal/studio/tryrun"
)

// studioMounts returns the APIs `connectd studio` mounts beside its own
// (internal/studio/API.md): the catalog view, the pipeline graph and
// try-it, whose runs are children of this binary. Relative paths in a
// pipeline resolve against the working directory, as for `connectd lint`
// and `connectd run`; the catalog and graph views read a catalog file only
// where allow says (the directories the studio was given).
func studioMounts(allow func(path string) error) []studio.Mount {
	wd, _ := os.Getwd()
	runner := tryrun.NewRunner(tryrun.Options{Dir: wd})
	return []studio.Mount{
		{Pattern: "POST /api/catalog", Handler: catalog.Handler(catalog.Options{Dir: wd, AllowFile: allow})},
		{Pattern: "POST /api/graph", Handler: graph.Handler(graph.Options{Dir: wd, AllowFile: allow})},
		{Pattern: "/api/run", Handler: runner, Close: func() { runner.Close() }},
		{Pattern: "/api/run/", Handler: runner},
		{Pattern: "/api/test", Handler: runner},
	}
}
