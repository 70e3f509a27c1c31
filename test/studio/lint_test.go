package studio

import (
	"os"
	"strings"
	"testing"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	"github.com/connectd/connectd/internal/distribution"
	"github.com/connectd/connectd/internal/studio"
	_ "github.com/connectd/connectd/plugins/bundle"
)

// TestLintMatchesConnectdLint (here, not in internal/studio: it needs the
// bundle's components, and nothing under internal/ imports plugins/): the lint API reports what `connectd lint`
// reports for the same file, at the same line and column: connectd's own
// checks (speclint) and Benthos's linter with the components' rules.
func TestLintMatchesConnectdLint(t *testing.T) {
	t.Parallel()
	quick, err := os.ReadFile("../../config/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l := studio.NewLinter(distribution.MainSchema("test", "now"))
	if got := l.Lint(quick); len(got) != 0 {
		t.Fatalf("quickstart: %v, want no problems", got)
	}
	cases := []struct {
		name, from, to string
		want           []studio.Diagnostic
	}{
		{"misspelt kafka_sink field", "            topic: quickstart", "            topik: quickstart", []studio.Diagnostic{
			{Line: 45, Column: 1, Message: "field topic: required"},
			{Line: 46, Column: 1, Message: "field topik not recognised"},
			{Line: 46, Column: 13, Message: "field topik: kafka_sink has no such field; did you mean topic?"},
		}},
		// kafka_source's Go validator reports at the component, through
		// its lint rule; Benthos's option check at the field.
		{"validator through the lint rule", "          start_from: earliest", "          start_from: yesterday", []studio.Diagnostic{
			{Line: 21, Column: 1, Message: `field start_from: unknown value "yesterday" (want one of earliest, latest, committed, timestamp, offsets)`},
			{Line: 24, Column: 1, Message: "value yesterday is not a valid option for this field"},
		}},
		// `connectd lint` prints this one at (1,1) with the parser's line in
		// the message; the editor marks that line.
		{"YAML that does not parse", "          commit_period: 1s", "          commit_period: [1s", []studio.Diagnostic{
			{Line: 24, Column: 1, Message: "yaml: line 24: did not find expected ',' or ']'"},
		}},
	}
	for _, c := range cases {
		src := strings.Replace(string(quick), c.from, c.to, 1)
		if src == string(quick) {
			t.Fatalf("%s: %q is not in the quickstart", c.name, c.from)
		}
		got := l.Lint([]byte(src))
		if len(got) == 0 {
			t.Errorf("%s: no problems", c.name)
			continue
		}
		if !equal(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
}

func equal(a, b []studio.Diagnostic) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
