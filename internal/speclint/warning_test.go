package speclint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"
)

// A warning check of the tests: it fires on a document with a top-level
// `warn_me` key.
func init() {
	RegisterDocumentWarning(func(root *yaml.Node) []string {
		if k, _ := Find(root, "warn_me"); k != nil {
			return []string{"(2,3) speclint test: this config runs, but warn_me is set"}
		}
		return nil
	})
}

// CheckYAML marks the findings of warning checks as warnings, located and
// printed as such.
func TestDocumentWarningsAreMarked(t *testing.T) {
	got := CheckYAML([]byte("warn_me: true\n"))
	if len(got) != 1 || !got[0].Warning || got[0].Line != 2 || got[0].Column != 3 {
		t.Fatalf("CheckYAML = %+v, want one warning at (2,3)", got)
	}
	if s := got[0].String(); s != "(2,3) warning: speclint test: this config runs, but warn_me is set" {
		t.Errorf("String() = %q", s)
	}
	if got := CheckYAML([]byte("other: true\n")); len(got) != 0 {
		t.Errorf("CheckYAML without the key = %+v, want none", got)
	}
}

// `connectd lint` prints warnings and exits 0, unless --deprecated (its
// strict mode); `connectd run` prints them and runs.
func TestCLIWarningsDoNotFail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warn.yaml")
	if err := os.WriteFile(path, []byte("warn_me: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int, error) {
		var out bytes.Buffer
		h := NewCLI(&out)
		flags := []cli.Flag{&cli.BoolFlag{Name: "deprecated"}, &cli.BoolFlag{Name: "chilled"}, &cli.StringSliceFlag{Name: "resources"}, &cli.StringFlag{Name: "config"}}
		app := &cli.App{Name: "connectd", Commands: []*cli.Command{
			{Name: "lint", Flags: flags, Action: h.OnRunFlags},
			{Name: "run", Flags: flags, Action: h.OnRunFlags},
		}}
		err := app.Run(append([]string{"connectd"}, args...))
		return out.String(), h.ExitCode(0), err
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"lint", path}, 0},
		{[]string{"lint", "--deprecated", path}, 1},
		{[]string{"run", path}, 0},
	} {
		out, code, err := run(tc.args...)
		if err != nil || code != tc.code {
			t.Errorf("%v: exit code %d, err %v; want %d, nil", tc.args, code, err, tc.code)
		}
		if !strings.Contains(out, "warning: speclint test: this config runs") {
			t.Errorf("%v: output does not carry the warning:\n%s", tc.args, out)
		}
	}
}
