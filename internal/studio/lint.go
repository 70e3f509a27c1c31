package studio

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/speclint"
)

// Diagnostic is a problem in the editor's buffer, at the line and column
// `connectd lint` gives for the same file (1-based).
type Diagnostic struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// Linter runs the checks of `connectd lint` on a buffer: Benthos's
// linter under the binary's config schema (unknown fields and components,
// wrong types, the components' lint rules, which carry connectd's Go
// validators) and connectd's own (internal/speclint: "did you mean", the
// checks that span components, and the validators' problems Benthos skips
// when a field has the wrong type). The one difference: environment
// variables without a default that are not set here are not reported, since
// the buffer is not run in the environment the file will be.
type Linter struct {
	schema *service.ConfigSchema
}

// Lint returns the buffer's problems, ordered by line and column, each once.
func (l *Linter) Lint(data []byte) []Diagnostic {
	var out []Diagnostic
	for _, p := range speclint.CheckYAML(data) {
		if !p.ByRule {
			out = append(out, Diagnostic{Line: p.Line, Column: p.Column, Message: p.Message})
		}
	}
	out = append(out, l.benthos(data)...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Column < out[j].Column
	})
	uniq := out[:0]
	seen := map[Diagnostic]bool{}
	for _, d := range out {
		if !seen[d] {
			seen[d] = true
			uniq = append(uniq, d)
		}
	}
	return uniq
}

// yamlLine finds the line of a YAML parser error ("yaml: line 12: ...").
var yamlLine = regexp.MustCompile(`line (\d+)`)

// benthos runs Benthos's linter: the one `connectd lint` runs, through the
// public StreamBuilder, which lints a whole config under a schema.
func (l *Linter) benthos(data []byte) []Diagnostic {
	b := service.NewStreamBuilder()
	if l.schema != nil {
		b.SetSchema(l.schema)
	}
	b.SetEnvVarLookupFunc(func(string) (string, bool) { return "", false })
	err := b.SetYAML(string(data))
	if err == nil {
		return nil
	}
	var lerr service.LintError
	if errors.As(err, &lerr) {
		out := make([]Diagnostic, 0, len(lerr))
		for _, x := range lerr {
			out = append(out, Diagnostic{Line: max(x.Line, 1), Column: max(x.Column, 1), Message: x.What})
		}
		return out
	}
	var one service.Lint
	if errors.As(err, &one) {
		return []Diagnostic{{Line: max(one.Line, 1), Column: max(one.Column, 1), Message: one.What}}
	}
	line := 1
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	return []Diagnostic{{Line: line, Column: 1, Message: err.Error()}}
}

// ServeHTTP serves POST /api/lint: the body is the buffer, the answer
// {"problems": [Diagnostic...]}.
func (l *Linter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("method %s: POST the buffer", r.Method))
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFileBytes))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("reading the buffer: %w", err))
		return
	}
	problems := l.Lint(data)
	if problems == nil {
		problems = []Diagnostic{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"problems": problems})
}

// NewLinter returns a Linter under the binary's config schema (nil: the
// global environment's).
func NewLinter(schema *service.ConfigSchema) *Linter { return &Linter{schema: schema} }
