// Package docsgen writes the reference pages of connectd's components,
// docs/components/<name>.md, from their specs: the summary, the
// description (with its Metadata and Metrics sections), a table of every
// field with its type, default, whether it is advanced and the Flink option
// its description names, a section per field, and the spec's examples.
// `make docs` runs it (cmd/connectd-docs); a test of the bundle compares
// the checked-in pages with what the specs generate now.
//
// It documents the components registered with speclint (every component of
// the bundle), as Benthos's global environment holds them: the binary that
// generates must import them, as cmd/connectd-docs does.
package docsgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/speclint"
)

// IndexFile is the page that lists the components.
const IndexFile = "README.md"

// header opens every generated page.
const header = "<!-- Generated from the component specs by `make docs` (cmd/connectd-docs): edit the spec, not this page. -->\n\n"

// Component is a component of the bundle.
type Component struct {
	Kind speclint.Kind
	Name string
}

// File is the name of the component's page.
func (c Component) File() string { return c.Name + ".md" }

// Bundle returns the components registered with speclint, by kind then
// name.
func Bundle() []Component {
	var out []Component
	for _, name := range speclint.Components() {
		kind, _ := speclint.KindOf(name)
		out = append(out, Component{Kind: kind, Name: name})
	}
	order := map[speclint.Kind]int{speclint.Input: 0, speclint.Buffer: 1, speclint.Processor: 2, speclint.Output: 3, speclint.Metrics: 4}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i].Kind] < order[out[j].Kind] })
	return out
}

// Files returns every page, by file name: one per component of the bundle
// and the index.
func Files() (map[string][]byte, error) {
	files := map[string][]byte{}
	var specs []spec
	for _, c := range Bundle() {
		s, err := load(c)
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
		files[c.File()] = render(s)
	}
	files[IndexFile] = renderIndex(specs)
	return files, nil
}

// Write writes every page into dir and removes pages of components that no
// longer exist (*.md files that Files does not return).
func Write(dir string) error {
	files, err := Files()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	for _, p := range old {
		if _, ok := files[filepath.Base(p)]; !ok {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Stale compares the pages in dir with what the specs generate and returns
// a line per page that differs, is missing or should not be there.
func Stale(dir string) ([]string, error) {
	files, err := Files()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range sortedKeys(files) {
		have, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case os.IsNotExist(err):
			out = append(out, name+": missing")
		case err != nil:
			return nil, err
		case !bytes.Equal(have, files[name]):
			out = append(out, name+": differs from what the specs generate")
		}
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	for _, p := range old {
		if _, ok := files[filepath.Base(p)]; !ok {
			out = append(out, filepath.Base(p)+": no component has this page")
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// spec is what a page is made of: the component's docs as Benthos
// serialises them, and its example configs.
type spec struct {
	Component
	Status      string    `json:"status"`
	Summary     string    `json:"summary"`
	Description string    `json:"description"`
	Categories  []string  `json:"categories"`
	Footnotes   string    `json:"footnotes"`
	Examples    []example `json:"examples"`
	Config      field     `json:"config"`

	common, full string // example configs, every field at its default
}

type example struct {
	Title   string `json:"title"`
	Summary string `json:"summary"`
	Config  string `json:"config"`
}

// field is a config field as Benthos serialises it.
type field struct {
	Name         string          `json:"name"`
	Type         string          `json:"type"`
	Kind         string          `json:"kind"`
	Description  string          `json:"description"`
	Advanced     bool            `json:"is_advanced"`
	Deprecated   bool            `json:"is_deprecated"`
	Optional     bool            `json:"is_optional"`
	Secret       bool            `json:"is_secret"`
	Interpolated bool            `json:"interpolated"`
	Default      json.RawMessage `json:"default"`
	Options      []string        `json:"options"`
	Annotated    [][2]string     `json:"annotated_options"`
	Examples     []any           `json:"examples"`
	Children     []field         `json:"children"`
}

// load reads a component's docs from Benthos's global environment.
func load(c Component) (spec, error) {
	var view *service.ConfigView
	find := func(name string, v *service.ConfigView) {
		if name == c.Name {
			view = v
		}
	}
	env := service.GlobalEnvironment()
	switch c.Kind {
	case speclint.Input:
		env.WalkInputs(find)
	case speclint.Output:
		env.WalkOutputs(find)
	case speclint.Processor:
		env.WalkProcessors(find)
	case speclint.Buffer:
		env.WalkBuffers(find)
	case speclint.Metrics:
		env.WalkMetrics(find)
	}
	if view == nil {
		return spec{}, fmt.Errorf("docsgen: %s %s is not registered with Benthos", c.Kind, c.Name)
	}
	data, err := view.FormatJSON()
	if err != nil {
		return spec{}, fmt.Errorf("docsgen: %s: %w", c.Name, err)
	}
	s := spec{Component: c}
	if err := json.Unmarshal(data, &s); err != nil {
		return spec{}, fmt.Errorf("docsgen: %s: %w", c.Name, err)
	}
	td, err := view.TemplateData()
	if err != nil {
		return spec{}, fmt.Errorf("docsgen: %s: %w", c.Name, err)
	}
	s.common, s.full = td.CommonConfigYAML, td.AdvancedConfigYAML
	return s, nil
}
