// Package schemacheck is `connectd schema-check`: it checks the Avro
// schemas that writing a pipeline's avro-confluent tables would register
// against their schema registry subjects' compatibility levels, locally
// (package compat) and before anything runs — the seed's troubleshooting
// case "schema compatibility", caught at deploy time instead of at the first
// record.
package schemacheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/compat"
	"github.com/connectd/connectd/schema/registry"
)

// Result is the check of one subject.
type Result struct {
	// Source names where the table is: the file, and the config path of a
	// YAML config's component.
	Source string
	Table  string
	Part   string // "key" or "value"
	// Subject is "" when it depends on each record's topic (topic-pattern
	// without a 'subject' option): then nothing is checked.
	Subject  string
	Level    string
	Versions int
	// Err is the incompatibility (wrapping compat.ErrIncompatible) or the
	// failure to check.
	Err error
}

func (r Result) String() string {
	head := fmt.Sprintf("%s: table %s, %s", r.Source, r.Table, r.Part)
	switch {
	case r.Subject == "":
		return head + ": not checked: the subject depends on each record's topic (set the format option 'subject')"
	case r.Err != nil:
		return fmt.Sprintf("%s, subject %s: %v", head, r.Subject, r.Err)
	case r.Versions == 0:
		return fmt.Sprintf("%s, subject %s: compatible (no version registered yet)", head, r.Subject)
	default:
		versions := "1 version"
		if r.Versions != 1 {
			versions = fmt.Sprintf("%d versions", r.Versions)
		}
		return fmt.Sprintf("%s, subject %s (%s, %s): compatible", head, r.Subject, r.Level, versions)
	}
}

// Options configure Check.
type Options struct {
	// Registry, when set, replaces the tables' registry URLs.
	Registry string
}

// Check checks every avro-confluent table in files: Flink DDL (.sql,
// .ddl) or connectd configs (.yaml, .yml: the ddl, catalog and table
// fields of their components). A file that cannot be read or a table that
// does not resolve is an error.
func Check(ctx context.Context, files []string, opts Options) ([]Result, error) {
	var (
		out  []Result
		errs []error
	)
	var override *registry.Client
	if opts.Registry != "" {
		c, err := registry.New(registry.Config{URL: opts.Registry})
		if err != nil {
			return nil, fmt.Errorf("--registry: %w", err)
		}
		override = c
	}
	for _, f := range files {
		tables, err := tablesOf(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, st := range tables {
			codec, err := table.NewCodec(st.table)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", st.source, err))
				continue
			}
			for _, rs := range codec.RegistrySchemas() {
				r := Result{Source: st.source, Table: st.table.Name, Part: rs.Part, Subject: rs.Subject}
				if r.Subject != "" {
					client := rs.Client
					if override != nil {
						client = override
					}
					r.Level, r.Versions, r.Err = checkOne(ctx, client, rs.Subject, rs.Schema)
				}
				out = append(out, r)
			}
		}
	}
	return out, errors.Join(errs...)
}

// checkOne checks schema against subject's versions at its level.
func checkOne(ctx context.Context, c *registry.Client, subject, avroSchema string) (string, int, error) {
	level, err := c.Level(ctx, subject)
	shown := level
	if errors.Is(err, registry.ErrNotFound) {
		// A registry that serves no /config: Confluent's default.
		level, shown, err = string(compat.Backward), string(compat.Backward)+", assumed: the registry serves no /config", nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("reading the compatibility level: %w", err)
	}
	l, err := compat.ParseLevel(level)
	if err != nil {
		return level, 0, err
	}
	level = shown
	versions, err := c.Schemas(ctx, subject)
	if err != nil {
		return level, 0, fmt.Errorf("reading the registered versions: %w", err)
	}
	return level, len(versions), compat.Check(l, avroSchema, versions)
}

// sourcedTable is a table and where it was found.
type sourcedTable struct {
	source string
	table  *schema.Table
}

// tablesOf returns the Kafka tables of a DDL file or a config.
func tablesOf(path string) ([]sourcedTable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".sql", ".ddl":
		tables, err := schema.ParseDDL(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var out []sourcedTable
		for _, t := range tables {
			if err := t.Validate(); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			switch t.Options[schema.OptConnector] {
			case schema.ConnectorKafka, schema.ConnectorUpsertKafka:
				out = append(out, sourcedTable{source: path, table: t})
			}
		}
		return out, nil
	default:
		return configTables(path, data)
	}
}

// configTables finds the components of a YAML config that name a table
// (fields ddl, catalog, table) and resolves their tables as the components
// do.
func configTables(path string, data []byte) ([]sourcedTable, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var (
		out  []sourcedTable
		errs []error
	)
	var walk func(n *yaml.Node, at string)
	walk = func(n *yaml.Node, at string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, at)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s.%d", at, i))
			}
		case yaml.MappingNode:
			if raw, ok := rawTable(n); ok {
				t, err := raw.ResolveKafka()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %s: %w", path, at, err))
				} else if t != nil {
					out = append(out, sourcedTable{source: path + ": " + at, table: t})
				}
				return
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				walk(n.Content[i+1], strings.TrimPrefix(at+"."+key, "."))
			}
		}
	}
	walk(&root, "")
	return out, errors.Join(errs...)
}

// rawTable reads the table fields of a component's mapping: ddl or catalog
// (with table naming one of its tables), or table as an inline object.
func rawTable(n *yaml.Node) (table.Raw, bool) {
	var raw table.Raw
	var tableNode *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		switch k {
		case table.FieldDDL:
			if v.Kind == yaml.ScalarNode {
				raw.DDL = v.Value
			}
		case table.FieldCatalog:
			if v.Kind == yaml.ScalarNode {
				raw.Catalog = v.Value
			}
		case table.FieldTable:
			tableNode = v
		}
	}
	if tableNode != nil {
		var t any
		if tableNode.Decode(&t) == nil {
			raw.Table = t
		}
		if _, inline := t.(map[string]any); inline && raw.DDL == "" && raw.Catalog == "" {
			return raw, true
		}
	}
	return raw, raw.DDL != "" || raw.Catalog != ""
}
