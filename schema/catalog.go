package schema

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Catalog holds named tables, as Flink's in-memory catalog: read from a `.sql`
// file of CREATE TABLE statements or a YAML file of tables.
type Catalog struct {
	tables []*Table
}

// NewCatalog returns a catalog of tables; names must be unique.
func NewCatalog(tables ...*Table) (*Catalog, error) {
	seen := map[string]bool{}
	for _, t := range tables {
		if seen[t.Name] {
			return nil, fmt.Errorf("catalog: table %s is defined twice", t.Name)
		}
		seen[t.Name] = true
	}
	return &Catalog{tables: tables}, nil
}

// LoadCatalog reads a catalog file: `.sql` holds CREATE TABLE statements,
// `.yaml` / `.yml` a `tables:` list (or one table) in the YAML form.
func LoadCatalog(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	c, err := ParseCatalog(filepath.Ext(path), data)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", path, err)
	}
	return c, nil
}

// ParseCatalog parses catalog text; ext is ".sql", ".yaml" or ".yml".
func ParseCatalog(ext string, data []byte) (*Catalog, error) {
	switch strings.ToLower(ext) {
	case ".sql":
		tables, err := ParseDDL(string(data))
		if err != nil {
			return nil, err
		}
		return NewCatalog(tables...)
	case ".yaml", ".yml":
		var probe map[string]any
		if err := yaml.Unmarshal(data, &probe); err != nil {
			return nil, err
		}
		if _, ok := probe["tables"]; !ok {
			t, err := ParseTableYAML(data)
			if err != nil {
				return nil, err
			}
			return NewCatalog(t)
		}
		var doc struct {
			Tables []TableYAML `yaml:"tables"`
		}
		if err := decodeStrict(data, &doc); err != nil {
			return nil, err
		}
		tables := make([]*Table, 0, len(doc.Tables))
		for i, ty := range doc.Tables {
			t, err := ty.Table()
			if err != nil {
				return nil, fmt.Errorf("tables[%d]: %w", i, err)
			}
			tables = append(tables, t)
		}
		return NewCatalog(tables...)
	}
	return nil, fmt.Errorf("unknown catalog file type %q (want .sql, .yaml or .yml)", ext)
}

// Tables returns the tables in definition order.
func (c *Catalog) Tables() []*Table { return c.tables }

// Table returns the named table, validated. name matches a table's name
// exactly, or its last part when the table name is qualified (`db.orders`
// is found as `orders`) and that part is unique.
func (c *Catalog) Table(name string) (*Table, error) {
	var found []*Table
	for _, t := range c.tables {
		if t.Name == name {
			found = []*Table{t}
			break
		}
		if i := strings.LastIndexByte(t.Name, '.'); i >= 0 && t.Name[i+1:] == name {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 0:
		names := make([]string, 0, len(c.tables))
		for _, t := range c.tables {
			names = append(names, t.Name)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("catalog: no table %s (tables: %s)", name, strings.Join(names, ", "))
	case 1:
		if err := found[0].Validate(); err != nil {
			return nil, err
		}
		return found[0], nil
	}
	return nil, fmt.Errorf("catalog: table name %s is ambiguous; qualify it", name)
}

// TableYAML is the YAML form of a table.
//
//	name: orders
//	columns:
//	  - { name: id, type: BIGINT NOT NULL }
//	  - { name: ts, type: TIMESTAMP_LTZ(3), metadata: timestamp, virtual: true }
//	primary_key: [ id ]
//	watermark: { column: ts, delay: 5s }
//	options: { connector: kafka, topic: orders, format: json }
type TableYAML struct {
	Name       string            `yaml:"name"`
	Comment    string            `yaml:"comment"`
	Columns    []ColumnYAML      `yaml:"columns"`
	PrimaryKey []string          `yaml:"primary_key"`
	Watermark  *WatermarkYAML    `yaml:"watermark"`
	Options    map[string]string `yaml:"options"`
}

// ColumnYAML is a column in the YAML form. Metadata names the metadata key
// (`METADATA FROM 'key'`); Expr makes a computed column (`AS expr`).
type ColumnYAML struct {
	Name     string `yaml:"name"`
	Type     string `yaml:"type"`
	Metadata string `yaml:"metadata"`
	Virtual  bool   `yaml:"virtual"`
	Expr     string `yaml:"expr"`
	Comment  string `yaml:"comment"`
}

// WatermarkYAML is `WATERMARK FOR column AS column - INTERVAL delay`; delay
// is a duration ("5s", "5 s", "1 min"), default 0.
type WatermarkYAML struct {
	Column string `yaml:"column"`
	Delay  string `yaml:"delay"`
	// Source is SOURCE_WATERMARK(): the source's own watermark.
	Source bool `yaml:"source,omitempty"`
}

// ParseTableYAML parses one table in the YAML form, rejecting unknown keys.
func ParseTableYAML(data []byte) (*Table, error) {
	var ty TableYAML
	if err := decodeStrict(data, &ty); err != nil {
		return nil, err
	}
	return ty.Table()
}

func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return err
	}
	return nil
}

// Table converts the YAML form to a Table (not yet validated).
func (ty TableYAML) Table() (*Table, error) {
	t := &Table{Name: ty.Name, Comment: ty.Comment, Options: map[string]string{}}
	for k, v := range ty.Options {
		t.Options[k] = v
	}
	var errs []error
	for i, cy := range ty.Columns {
		c := Column{Name: cy.Name, Comment: cy.Comment, Virtual: cy.Virtual}
		label := cy.Name
		if label == "" {
			label = fmt.Sprintf("#%d", i+1)
		}
		switch {
		case cy.Expr != "":
			if cy.Type != "" || cy.Metadata != "" {
				errs = append(errs, fmt.Errorf("column %s: a computed column (expr) has no type or metadata", label))
			}
			c.Kind, c.Expr = Computed, cy.Expr
		case cy.Type == "":
			errs = append(errs, fmt.Errorf("column %s: type is required", label))
		default:
			typ, err := ParseType(cy.Type)
			if err != nil {
				errs = append(errs, fmt.Errorf("column %s: type %q: %w", label, cy.Type, err))
			}
			c.Type = typ
			if cy.Metadata != "" {
				c.Kind, c.MetadataKey = Metadata, cy.Metadata
			} else if cy.Virtual {
				errs = append(errs, fmt.Errorf("column %s: virtual applies to metadata columns only", label))
			}
		}
		t.Columns = append(t.Columns, c)
	}
	if len(ty.PrimaryKey) > 0 {
		t.PrimaryKey = &PrimaryKey{Columns: ty.PrimaryKey}
	}
	if wy := ty.Watermark; wy != nil {
		wm := &Watermark{Column: wy.Column, Source: wy.Source}
		if wy.Source && wy.Delay != "" {
			errs = append(errs, fmt.Errorf("watermark.delay: the source's own watermark (watermark.source) takes no delay; set the source's watermark settings instead"))
		}
		if wy.Delay != "" {
			d, err := ParseFlinkDuration(wy.Delay)
			if err != nil {
				errs = append(errs, fmt.Errorf("watermark.delay: %w", err))
			}
			wm.Delay = d
		}
		t.Watermark = wm
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("table %s: %w", ty.Name, err)
	}
	t.normalize()
	return t, nil
}

// YAML returns the table in its YAML form.
func (t *Table) YAML() TableYAML {
	ty := TableYAML{Name: t.Name, Comment: t.Comment, Options: t.Options}
	for _, c := range t.Columns {
		cy := ColumnYAML{Name: c.Name, Comment: c.Comment, Virtual: c.Virtual, Expr: c.Expr}
		if c.Type != nil {
			cy.Type = c.Type.String()
		}
		if c.Kind == Metadata {
			cy.Metadata = c.MetadataKey
		}
		ty.Columns = append(ty.Columns, cy)
	}
	if t.PrimaryKey != nil {
		ty.PrimaryKey = t.PrimaryKey.Columns
	}
	if t.Watermark != nil {
		ty.Watermark = &WatermarkYAML{Column: t.Watermark.Column, Delay: t.Watermark.Delay.String(), Source: t.Watermark.Source}
	}
	return ty
}
