package distribution

import (
	"os"

	"github.com/connectd/connectd/internal/studio"
	"github.com/connectd/connectd/internal/studio/catalog"
)

// studioMounts returns the APIs `connectd studio` mounts beside its own
// (internal/studio/API.md): the catalog view, the pipeline graph and
// try-it. Relative paths in a pipeline resolve against the working
// directory, as for `connectd lint` and `connectd run`.
func studioMounts() []studio.Mount {
	wd, _ := os.Getwd()
	return []studio.Mount{
		{Pattern: "POST /api/catalog", Handler: catalog.Handler(catalog.Options{Dir: wd})},
	}
}
