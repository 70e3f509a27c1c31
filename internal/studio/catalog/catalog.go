// Package catalog is the studio's catalog view: the Flink tables a pipeline
// uses, read from the `table`, `catalog` and `ddl` fields of the components
// that take one (internal/table), with their columns, primary key, metadata
// columns and watermark, and every problem at its line and column in the
// YAML file: a DDL syntax error inside a `ddl: |` block is reported where
// it is in the file, not in the DDL string.
package catalog

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/studio/yamlsrc"
	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema"
)

// Components are the components whose config may name a table.
var Components = []string{"kafka_source", "kafka_sink", "table_decode", "table_encode", "cel"}

// Sources of a table.
const (
	SourceDDL     = "ddl"
	SourceCatalog = "catalog"
	SourceYAML    = "yaml"
)

// Column kinds, as schema.ColumnKind names them.
const (
	KindPhysical = "physical"
	KindMetadata = "metadata"
	KindComputed = "computed"
)

// Column is one column of a table.
type Column struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Kind        string `json:"kind"`
	MetadataKey string `json:"metadata_key,omitempty"`
	Virtual     bool   `json:"virtual,omitempty"`
	Expr        string `json:"expr,omitempty"`
	Comment     string `json:"comment,omitempty"`
}

// Watermark is `WATERMARK FOR column AS column - INTERVAL ...`.
type Watermark struct {
	Column  string `json:"column"`
	Delay   string `json:"delay"`
	DelayMs int64  `json:"delay_ms"`
}

// Use is a component that uses a table.
type Use struct {
	Path      string `json:"path"`
	Component string `json:"component"`
}

// Table is a table as the catalog view shows it.
type Table struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Catalog is the catalog file's path as written, for Source catalog.
	Catalog string `json:"catalog,omitempty"`
	UsedBy  []Use  `json:"used_by,omitempty"`
	// Range is where the table is defined in the file: its CREATE TABLE
	// statement or its YAML object; nil for a catalog file's table.
	Range *yamlsrc.Range `json:"range,omitempty"`
	// DDLRange is the whole ddl string, for Source ddl.
	DDLRange        *yamlsrc.Range    `json:"ddl_range,omitempty"`
	Columns         []Column          `json:"columns"`
	PrimaryKey      []string          `json:"primary_key,omitempty"`
	MetadataColumns []string          `json:"metadata_columns,omitempty"`
	Watermark       *Watermark        `json:"watermark,omitempty"`
	Options         map[string]string `json:"options,omitempty"`
	Comment         string            `json:"comment,omitempty"`
}

// Result is the catalog view of a file.
type Result struct {
	Tables []*Table          `json:"tables"`
	Errors []yamlsrc.Problem `json:"errors"`
}

// Env is what reading a pipeline needs from outside the file.
type Env struct {
	// Dir resolves relative catalog paths ("" is the process's working
	// directory), as `connectd lint` and `run` do.
	Dir string
	// LookupEnv expands ${VAR:default} in catalog paths; nil expands
	// only the defaults.
	LookupEnv func(string) (string, bool)
	// AllowFile, when set, vets the absolute path of a catalog file before
	// it is read (the studio allows only its directories); its error is
	// the catalog field's problem.
	AllowFile func(path string) error
}

func (e Env) lookup(k string) (string, bool) {
	if e.LookupEnv == nil {
		return "", false
	}
	return e.LookupEnv(k)
}

// Analyze reads the tables of the pipeline src.
func Analyze(src []byte, env Env) Result {
	res := Result{Tables: []*Table{}, Errors: []yamlsrc.Problem{}}
	root, problems := yamlsrc.Parse(src)
	res.Errors = append(res.Errors, problems...)
	if root == nil {
		return res
	}
	s := yamlsrc.NewSource(src)
	byKey := map[string]*Table{}
	seenProblem := map[yamlsrc.Problem]bool{}
	Walk(root, func(path, component string, key, conf *yaml.Node) {
		def, err := Resolve(s, conf, env)
		if err != nil {
			p := err.Problem
			p.Path = joinPath(joinPath(path, component), err.Field)
			if !seenProblem[p] {
				seenProblem[p] = true
				res.Errors = append(res.Errors, p)
			}
			return
		}
		if def == nil {
			return
		}
		t, ok := byKey[def.key]
		if !ok {
			t = def.Table
			byKey[def.key] = t
			res.Tables = append(res.Tables, t)
		}
		t.UsedBy = append(t.UsedBy, Use{Path: path, Component: component})
	})
	return res
}

// Walk calls fn for each config of a component that may name a table
// (Components), wherever it is in the file: path is the dotted path of the
// component (`input.broker.inputs.1`), key its name's node.
func Walk(root *yaml.Node, fn func(path, component string, key, conf *yaml.Node)) {
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if isComponent(k.Value) && yamlsrc.Resolve(v).Kind == yaml.MappingNode {
					fn(path, k.Value, k, yamlsrc.Resolve(v))
					continue
				}
				walk(v, joinPath(path, k.Value))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, joinPath(path, fmt.Sprint(i)))
			}
		}
	}
	walk(root, "")
}

func isComponent(name string) bool {
	for _, c := range Components {
		if c == name {
			return true
		}
	}
	return false
}

func joinPath(path, name string) string {
	switch {
	case name == "":
		return path
	case path == "":
		return name
	}
	return path + "." + name
}

// Definition is the table a component config names.
type Definition struct {
	*Table
	// key identifies the definition: the same ddl node (a YAML anchor
	// shared by components), catalog file or table object, and name.
	key string
}

// Error is a component's table problem: the field it is about (table,
// catalog or ddl) and where.
type Error struct {
	Field   string
	Problem yamlsrc.Problem
}

func (e *Error) Error() string { return e.Problem.Message }

// Resolve returns the table the component config conf names, nil when it
// names none.
func Resolve(s *yamlsrc.Source, conf *yaml.Node, env Env) (*Definition, *Error) {
	tableKey, tableNode := yamlsrc.Get(conf, table.FieldTable)
	catalogKey, _ := yamlsrc.Get(conf, table.FieldCatalog)
	ddlKey, ddlNode := yamlsrc.Get(conf, table.FieldDDL)
	var raw table.Raw
	if tableNode != nil && tableNode.Tag != "!!null" {
		if err := tableNode.Decode(&raw.Table); err != nil {
			return nil, &Error{Field: table.FieldTable, Problem: at(err.Error(), tableKey)}
		}
	}
	catalogPath := yamlsrc.String(conf, table.FieldCatalog)
	if catalogPath != "" {
		raw.Catalog = yamlsrc.ExpandEnv(catalogPath, env.lookup)
		if !filepath.IsAbs(raw.Catalog) && env.Dir != "" {
			raw.Catalog = filepath.Join(env.Dir, raw.Catalog)
		}
		if env.AllowFile != nil {
			abs, err := filepath.Abs(raw.Catalog)
			if err == nil {
				err = env.AllowFile(abs)
			}
			if err != nil {
				return nil, &Error{Field: table.FieldCatalog, Problem: at(fmt.Sprintf("field %s: %s: %v", table.FieldCatalog, catalogPath, err), catalogKey)}
			}
		}
	}
	// Benthos expands ${VAR:default} in the whole file before a component
	// sees its ddl (`'properties.bootstrap.servers' = '${BROKERS:...}'`).
	raw.DDL = yamlsrc.ExpandEnv(yamlsrc.String(conf, table.FieldDDL), env.lookup)
	if !raw.Set() {
		return nil, nil
	}
	t, err := raw.Resolve()
	if err != nil {
		return nil, problemOf(s, err, fieldNodes{
			table.FieldTable: tableKey, table.FieldCatalog: catalogKey, table.FieldDDL: ddlKey,
		}, ddlNode, catalogPath)
	}
	out := describe(t)
	def := &Definition{Table: out}
	switch {
	case raw.DDL != "":
		out.Source = SourceDDL
		def.key = fmt.Sprintf("ddl %p %s", ddlNode, t.Name)
		r := s.Range(nil, ddlNode)
		out.DDLRange = &r
		out.Range = statementRange(s, ddlNode, raw.DDL, t.Name)
	case raw.Catalog != "":
		out.Source, out.Catalog = SourceCatalog, catalogPath
		def.key = fmt.Sprintf("catalog %s %s", raw.Catalog, t.Name)
	default:
		out.Source = SourceYAML
		def.key = fmt.Sprintf("yaml %p", tableNode)
		r := s.Range(tableKey, tableNode)
		out.Range = &r
	}
	return def, nil
}

type fieldNodes map[string]*yaml.Node

// fieldPrefix matches internal/table's "field NAME: ..." errors.
var fieldPrefix = regexp.MustCompile(`^field (table|catalog|ddl): `)

// problemOf places a resolution error: a DDL syntax error at its position
// in the file (through the ddl scalar) or in the catalog file, anything
// else at the key of the field the error names.
func problemOf(s *yamlsrc.Source, err error, keys fieldNodes, ddlNode *yaml.Node, catalogPath string) *Error {
	field := table.FieldTable
	if m := fieldPrefix.FindStringSubmatch(err.Error()); m != nil {
		field = m[1]
	}
	e := &Error{Field: field, Problem: yamlsrc.Problem{Message: err.Error()}}
	var syn *schema.SyntaxError
	switch {
	case errors.As(err, &syn) && field == table.FieldDDL && ddlNode != nil:
		e.Problem.Message = syn.Msg
		if p, ok := s.ValuePos(ddlNode, yamlsrc.Pos{Line: syn.Line, Col: syn.Column}); ok {
			e.Problem.Line, e.Problem.Col = p.Line, p.Col
			return e
		}
		e.Problem.Message = fmt.Sprintf("%s (ddl line %d, column %d)", syn.Msg, syn.Line, syn.Column)
		p := yamlsrc.Start(ddlNode)
		e.Problem.Line, e.Problem.Col = p.Line, p.Col
		return e
	case errors.As(err, &syn) && field == table.FieldCatalog:
		e.Problem.Message = syn.Msg
		e.Problem.File = catalogPath
		e.Problem.Line, e.Problem.Col = syn.Line, syn.Column
		return e
	}
	key := keys[field]
	if key == nil {
		for _, f := range []string{table.FieldTable, table.FieldDDL, table.FieldCatalog} {
			if keys[f] != nil {
				key = keys[f]
				break
			}
		}
	}
	if key != nil {
		e.Problem.Line, e.Problem.Col = key.Line, key.Column
	}
	return e
}

func at(msg string, n *yaml.Node) yamlsrc.Problem {
	p := yamlsrc.Problem{Message: msg}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	return p
}

// describe turns a schema table into the view's form.
func describe(t *schema.Table) *Table {
	out := &Table{Name: t.Name, Columns: []Column{}, Options: t.Options, Comment: t.Comment}
	for _, c := range t.Columns {
		col := Column{Name: c.Name, Kind: KindPhysical, Comment: c.Comment}
		if c.Type != nil {
			col.Type = c.Type.String()
		}
		switch c.Kind {
		case schema.Metadata:
			col.Kind, col.MetadataKey, col.Virtual = KindMetadata, c.MetadataKey, c.Virtual
			out.MetadataColumns = append(out.MetadataColumns, c.Name)
		case schema.Computed:
			col.Kind, col.Expr = KindComputed, c.Expr
		}
		out.Columns = append(out.Columns, col)
	}
	if t.PrimaryKey != nil {
		out.PrimaryKey = t.PrimaryKey.Columns
	}
	if wm := t.Watermark; wm != nil {
		out.Watermark = &Watermark{Column: wm.Column, Delay: wm.Delay.String(), DelayMs: wm.Delay.Milliseconds()}
	}
	return out
}

// createTable matches the head of a CREATE TABLE statement up to its name.
var createTable = regexp.MustCompile("(?is)\\bcreate\\s+(?:temporary\\s+)?table\\s+(?:if\\s+not\\s+exists\\s+)?((?:`[^`]*`|[A-Za-z0-9_$]+)(?:\\s*\\.\\s*(?:`[^`]*`|[A-Za-z0-9_$]+))*)")

// statementRange is the range in the file of the CREATE TABLE statement
// of the table name inside the ddl scalar, nil when it cannot be placed.
func statementRange(s *yamlsrc.Source, ddlNode *yaml.Node, ddl, name string) *yamlsrc.Range {
	heads := createTable.FindAllStringSubmatchIndex(ddl, -1)
	for i, m := range heads {
		written := strings.ReplaceAll(ddl[m[2]:m[3]], "`", "")
		written = strings.Join(strings.Fields(written), "")
		if written != strings.ReplaceAll(name, "`", "") {
			continue
		}
		limit := len(ddl)
		if i+1 < len(heads) {
			limit = heads[i+1][0]
		}
		start, ok1 := s.ValuePos(ddlNode, lineCol(ddl, m[0]))
		stop, ok2 := s.ValuePos(ddlNode, lineCol(ddl, statementEnd(ddl, m[1], limit)))
		if !ok1 || !ok2 {
			return nil
		}
		return &yamlsrc.Range{Start: start, End: stop}
	}
	return nil
}

// statementEnd is the byte offset of the last character of the statement
// that goes on at from: its `;`, or its last non-space character before
// limit (the next statement, or the end).
func statementEnd(ddl string, from, limit int) int {
	quote := byte(0)
	last := from - 1
	for i := from; i < limit; i++ {
		c := ddl[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '`':
			quote = c
		case c == ';':
			return i
		}
		if c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			last = i
		}
	}
	return last
}

// lineCol is the 1-based line and character column of byte offset off.
func lineCol(s string, off int) yamlsrc.Pos {
	start := strings.LastIndex(s[:off], "\n") + 1
	return yamlsrc.Pos{Line: 1 + strings.Count(s[:off], "\n"), Col: len([]rune(s[start:off])) + 1}
}
