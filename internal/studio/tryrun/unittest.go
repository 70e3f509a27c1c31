package tryrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/studio/yamlsrc"
)

// TestRequest is the body of POST /api/test.
type TestRequest struct {
	YAML string `json:"yaml"`
}

// TestCase is one of the file's `tests:` and its outcome.
type TestCase struct {
	Name     string   `json:"name"`
	Line     int      `json:"line"`
	Passed   bool     `json:"passed"`
	Failures []string `json:"failures,omitempty"`
}

// TestResult is the answer of POST /api/test.
type TestResult struct {
	Passed bool       `json:"passed"`
	Tests  []TestCase `json:"tests"`
	Lint   []string   `json:"lint,omitempty"`
	Output string     `json:"output"`
}

// The lines `connectd test` (Benthos's test runner) prints.
var (
	ansi        = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	caseHeader  = regexp.MustCompile(`^(.*) \[line (\d+)\]:$`)
	targetLine  = regexp.MustCompile(`^--- .* ---$`)
	summaryLine = regexp.MustCompile(`^Test '.*' (succeeded|failed)$`)
)

// Test runs the unit tests of the pipeline src with `connectd test` on a
// copy of it, in a child process.
func (r *Runner) Test(ctx context.Context, src string) (*TestResult, error) {
	cases, err := testCases([]byte(src))
	if err != nil {
		return nil, &RequestError{err}
	}
	bin, err := r.binary()
	if err != nil {
		return nil, fmt.Errorf("finding the connectd binary: %w", err)
	}
	dir, err := os.MkdirTemp("", "connectd-studio-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "test", file)
	cmd.Dir = r.opts.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if _, ok := runErr.(*exec.ExitError); runErr != nil && !ok {
		return nil, fmt.Errorf("running %s test: %w", bin, runErr)
	}
	res := parseTestOutput(ansi.ReplaceAllString(out.String(), ""), cases)
	res.Passed = runErr == nil && len(res.Tests) > 0 && len(res.Lint) == 0
	for _, c := range res.Tests {
		res.Passed = res.Passed && c.Passed
	}
	return res, nil
}

// testCases lists the file's `tests:` by name, with the line of each.
func testCases(src []byte) ([]TestCase, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("the pipeline is not valid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	_, tests := yamlsrc.Get(doc.Content[0], "tests")
	var out []TestCase
	if tests == nil || tests.Kind != yaml.SequenceNode {
		return nil, nil
	}
	for _, t := range tests.Content {
		k, v := yamlsrc.Get(t, "name")
		if k == nil {
			continue
		}
		out = append(out, TestCase{Name: v.Value, Line: v.Line, Passed: true})
	}
	return out, nil
}

// parseTestOutput reads what `connectd test` printed: after "Failures:",
// per file a "--- file ---" line, "Lint: ..." lines, and per failed case
// "name [line N]:" followed by its reasons.
func parseTestOutput(out string, cases []TestCase) *TestResult {
	res := &TestResult{Tests: cases, Output: out}
	if res.Tests == nil {
		res.Tests = []TestCase{}
	}
	current := -1
	var reason []string
	flush := func() {
		if current >= 0 && len(reason) > 0 {
			res.Tests[current].Failures = append(res.Tests[current].Failures, strings.Join(reason, "\n"))
		}
		reason = nil
	}
	inFailures := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "Failures:":
			inFailures = true
			continue
		case !inFailures:
			continue
		case targetLine.MatchString(line) || summaryLine.MatchString(line):
			flush()
			current = -1
			continue
		case strings.HasPrefix(line, "Lint: "):
			flush()
			current = -1
			res.Lint = append(res.Lint, strings.TrimPrefix(line, "Lint: "))
			continue
		}
		if m := caseHeader.FindStringSubmatch(line); m != nil {
			flush()
			ln, _ := strconv.Atoi(m[2])
			current = caseIndex(res, m[1], ln)
			res.Tests[current].Passed = false
			continue
		}
		if current < 0 {
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		reason = append(reason, line)
	}
	flush()
	return res
}

// caseIndex finds the case named name (at line ln when several share the
// name), adding it if the file's list lacks it.
func caseIndex(res *TestResult, name string, ln int) int {
	found := -1
	for i, c := range res.Tests {
		if c.Name != name {
			continue
		}
		if found < 0 || c.Line == ln {
			found = i
		}
	}
	if found >= 0 {
		return found
	}
	res.Tests = append(res.Tests, TestCase{Name: name, Line: ln})
	return len(res.Tests) - 1
}
