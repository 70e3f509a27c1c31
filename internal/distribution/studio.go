package distribution

import "github.com/connectd/connectd/internal/studio"

// studioMounts returns the APIs `connectd studio` mounts beside its own:
// the pipeline graph, the catalog view and try-it.
func studioMounts() []studio.Mount {
	return nil
}
