package speclint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"
)

func indent(body string) string {
	return "  " + strings.ReplaceAll(body, "\n", "\n  ") + "\n"
}

func parseNode(t *testing.T, body string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(body), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func lintOutput(t *testing.T, name, body string) []string {
	t.Helper()
	lints, err := service.GlobalEnvironment().NewComponentConfigLinter().LintOutputYAML([]byte(name + ":\n" + body))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range lints {
		out = append(out, l.What)
	}
	return out
}

// The lint rule that Register sets runs the component's Go validator.
func TestLintRuleRunsTheValidator(t *testing.T) {
	t.Parallel()
	got := lintOutput(t, testOutput, "  max_in_flight: 0\n  mode: slow\n  timeout: soon\n")
	for _, want := range []string{
		"field max_in_flight: must be at least 1, got 0",
		`field mode: unknown value "slow" (want fast or safe)`,
		`field timeout: expected a Go duration such as "500ms", "5s" or "1m", got "soon"`,
	} {
		if !slices.Contains(got, want) {
			t.Errorf("lints %q lack %q", got, want)
		}
	}
	if got := lintOutput(t, testOutput, "  max_in_flight: 4\n"); len(got) != 0 {
		t.Errorf("a valid config lints %q", got)
	}
	if problems, err := Validate(testOutput, "max_in_flight: 0\n"); err != nil || len(problems) != 1 {
		t.Errorf("Validate = %q, %v; want the max_in_flight problem", problems, err)
	}
	if _, err := Validate("no_such_component", ""); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("Validate of an unknown component: %v", err)
	}
}

// CheckYAML reports, for a component with a field of the wrong type (whose
// lint rule Benthos skips), the type errors and the validator's problems with
// the other fields, all at once; not the validator's view of the mistyped
// field.
func TestCheckYAMLReportsTypeErrorsWithTheRest(t *testing.T) {
	t.Setenv("SPECLINT_TEST_MAX", "lots")
	doc := `
output:
  broker:
    outputs:
      - speclint_test_output:
          max_in_flight: ${SPECLINT_TEST_MAX}
          mode: slow
          timeout: soon
          topics: [ a, { x: 1 }, bad ]
          labels: { a: [ 1 ] }
          batching:
            count: ten
            ratio: -1
`
	var got []string
	for _, p := range CheckYAML([]byte(doc)) {
		if p.ByRule {
			t.Errorf("%v: Benthos skips the lint rule of a component with a type error", p)
		}
		got = append(got, p.String())
	}
	want := []string{
		`(6,26) field max_in_flight: expected an integer, got string "lots"`,
		`(9,24) field topics[1]: expected a string, got an object`,
		`(10,24) field labels.a: expected a string, got a list`,
		`(12,20) field batching.count: expected an integer, got string "ten"`,
		`(8,20) field timeout: expected a Go duration such as "500ms", "5s" or "1m", got "soon"`,
		`(7,17) field mode: unknown value "slow" (want fast or safe)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The problems of a well-typed component are the validator's, marked
// ByRule: its lint rule reports them too, so `connectd lint` leaves them to
// Benthos's linter (and `connectd run` stops on them before Benthos lints).
func TestCheckYAMLMarksWhatTheLintRuleReports(t *testing.T) {
	t.Parallel()
	doc := "output:\n  speclint_test_output:\n    max_in_flight: 0\n    mode: slow\n"
	want := []Problem{
		{Line: 3, Column: 20, Message: "field max_in_flight: must be at least 1, got 0", ByRule: true},
		{Line: 4, Column: 11, Message: `field mode: unknown value "slow" (want fast or safe)`, ByRule: true},
	}
	if got := CheckYAML([]byte(doc)); !slices.Equal(got, want) {
		t.Errorf("CheckYAML = %v, want %v", got, want)
	}
	if got := CheckYAML([]byte("output:\n  drop:\n    max_in_flight: lots\n")); len(got) != 0 {
		t.Errorf("a component of Benthos's: %v", got)
	}
}

// typeProblems mirrors Benthos's decoding: a config has type problems
// exactly when Benthos's linter skips the component's lint rule, for every
// shape of value.
func TestTypeProblemsExactlyWhenBenthosSkipsTheRule(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		"max_in_flight: 4",
		"max_in_flight: lots",
		"max_in_flight: 1.5",
		`max_in_flight: "3"`,
		"max_in_flight: [ 1 ]",
		"max_in_flight: ~",
		"enabled: yes",
		"enabled: 1",
		"enabled: TRUE",
		"timeout: 5",
		"timeout: { a: 1 }",
		"mode: 7",
		"topics: orders",
		"topics: [ a, 2 ]",
		"topics: [ a, { x: 1 } ]",
		"topics: { a: b }",
		"labels: { a: b }",
		"labels: { a: [ 1 ] }",
		"labels: [ a ]",
		"batching: 3",
		"batching: { count: ten }",
		"batching: { ratio: half }",
		"batching: { ratio: 1 }",
		"batching: [ { count: x } ]",
		"anything: { deep: [ 1, { x: y } ] }",
		"unknown_field: { x: 1 }",
		"max_in_flight: &a 3\nenabled: *a",
	} {
		ruleRan := slices.Contains(lintOutput(t, testSentinel, indent(body)), sentinelProblem)
		c := lookup(testSentinel)
		docs, err := c.configDocs()
		if err != nil {
			t.Fatal(err)
		}
		n := parseNode(t, body)
		typeErrs := typeProblems(docs, n, "")
		if ruleRan == (len(typeErrs) > 0) {
			t.Errorf("%q: Benthos ran the lint rule: %v; type problems: %v", body, ruleRan, typeErrs)
		}
	}
}

func TestMessagesFlattenJoinedErrors(t *testing.T) {
	t.Parallel()
	a, b, c := errors.New("field a: x"), errors.New("field b: y"), fmt.Errorf("field c: %w", errors.New("z"))
	got := messages(errors.Join(a, errors.Join(b, nil, c), a))
	if want := []string{"field a: x", "field b: y", "field c: z"}; !slices.Equal(got, want) {
		t.Errorf("Messages = %q, want %q", got, want)
	}
	if messages(nil) != nil {
		t.Error("messages(nil) is not empty")
	}
}

func TestCheckFilesExpandsPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sub := filepath.Join(dir, "nested")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(sub, "bad.yaml")
	if err := os.WriteFile(bad, []byte("output:\n  speclint_test_output:\n    enabled: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "good.yml"), []byte("output:\n  speclint_test_output:\n    enabled: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, paths := range [][]string{{dir + "/..."}, {dir}, {filepath.Join(dir, "*", "*.yaml")}} {
		problems, err := CheckFiles(paths)
		if err != nil || len(problems) != 1 || problems[0].String() != bad+`(3,14) field enabled: expected true or false, got integer 3` {
			t.Errorf("CheckFiles(%q) = %v, %v", paths, problems, err)
		}
	}
	if problems, err := CheckFiles([]string{filepath.Join(dir, "*.yml")}); err != nil || len(problems) != 0 {
		t.Errorf("clean file: %v, %v", problems, err)
	}
}
