package distribution

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// WantsVersion reports whether args (without the program name) ask for the
// version alone: `connectd --version` or `connectd -v`. Benthos prints
// "Version: ... Date: ..." for these without naming the product, and its
// CLI exposes no way to change that; other spellings (the flag after other
// root flags) still reach Benthos's.
func WantsVersion(args []string) bool {
	if len(args) != 1 {
		return false
	}
	switch args[0] {
	case "--version", "-version", "-v", "--v":
		return true
	}
	return false
}

// PrintVersion writes the product, its version and build date, and the
// Benthos and Go versions it was built with.
func PrintVersion(w io.Writer, version, dateBuilt string) {
	fmt.Fprintf(w, "%s %s\nDate: %s\nBenthos: %s\nGo: %s\n", Name, version, dateBuilt, benthosVersion(), runtime.Version())
}

// benthosVersion is the version of the Benthos module in the binary.
func benthosVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, m := range info.Deps {
		if m.Path == "github.com/redpanda-data/benthos/v4" {
			if m.Replace != nil && m.Replace.Version != "" {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return "unknown"
}
