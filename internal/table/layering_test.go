package table

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The plugins build on internal/ and schema/, never the other way round: no
// package there imports a package under plugins/, in its code or its tests.
// The check reads `go list` over the module, so it also holds for packages
// added later.
func TestNoPluginImportsBelowPlugins(t *testing.T) {
	t.Parallel()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`,
		"./internal/...", "./schema/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	const plugins = "github.com/connectd/connectd/plugins"
	listed := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		listed++
		for _, imp := range fields[1:] {
			if imp == plugins || strings.HasPrefix(imp, plugins+"/") {
				t.Errorf("%s imports %s: packages under internal/ and schema/ must not import plugins/ (move the shared code below the plugins)", fields[0], imp)
			}
		}
	}
	if listed < 10 {
		t.Fatalf("go list named %d packages under internal/ and schema/; want them all:\n%s", listed, out)
	}
}
