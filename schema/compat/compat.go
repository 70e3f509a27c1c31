// Package compat checks an Avro schema against the schemas registered under
// a schema registry subject, at the subject's compatibility level, as the
// Confluent Schema Registry does before it registers a new version: BACKWARD
// (the new schema reads data written with the latest one), FORWARD (the
// latest reads data written with the new one), FULL (both), their
// _TRANSITIVE forms (against every version, not only the latest) and NONE.
//
// Schema resolution is github.com/hamba/avro/v2's (Avro's rules: promotions,
// defaults, aliases, enum symbols, union branches). This package adds the
// level semantics and names the field that breaks compatibility, by walking
// both schemas to the deepest field whose types do not resolve.
package compat

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hamba/avro/v2"
)

// Level is a compatibility level, named as the registry names it.
type Level string

// The registry's levels.
const (
	None               Level = "NONE"
	Backward           Level = "BACKWARD"
	BackwardTransitive Level = "BACKWARD_TRANSITIVE"
	Forward            Level = "FORWARD"
	ForwardTransitive  Level = "FORWARD_TRANSITIVE"
	Full               Level = "FULL"
	FullTransitive     Level = "FULL_TRANSITIVE"
)

// Levels lists every level.
var Levels = []Level{None, Backward, BackwardTransitive, Forward, ForwardTransitive, Full, FullTransitive}

// ParseLevel reads a level; the registry's default is BACKWARD.
func ParseLevel(s string) (Level, error) {
	if s == "" {
		return Backward, nil
	}
	for _, l := range Levels {
		if strings.EqualFold(s, string(l)) {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown compatibility level %q (want one of %v)", s, Levels)
}

// transitive reports whether l checks every version, not only the latest.
func (l Level) transitive() bool { return strings.HasSuffix(string(l), "_TRANSITIVE") }

// backward reports whether l requires the new schema to read data of the
// registered ones.
func (l Level) backward() bool {
	return strings.HasPrefix(string(l), "BACKWARD") || strings.HasPrefix(string(l), "FULL")
}

// forward reports whether l requires the registered schemas to read data
// of the new one.
func (l Level) forward() bool {
	return strings.HasPrefix(string(l), "FORWARD") || strings.HasPrefix(string(l), "FULL")
}

// ErrIncompatible is what every *Error matches with errors.Is.
var ErrIncompatible = errors.New("incompatible schema")

// Error says why a schema may not be registered.
type Error struct {
	Level Level
	// Version is the 1-based position of the registered schema it breaks
	// with, in the list given to Check.
	Version int
	// Direction is "backward" (the new schema cannot read data of the
	// registered one) or "forward" (the registered one cannot read data of
	// the new one).
	Direction string
	// Field is the dotted path of the field that breaks it, "" when the
	// top-level types differ.
	Field string
	// Reason is the resolution rule that fails.
	Reason string
}

func (e *Error) Error() string {
	where := "the top-level schema"
	if e.Field != "" {
		where = "field " + e.Field
	}
	why := fmt.Sprintf("the new schema cannot read data written with version %d", e.Version)
	if e.Direction == "forward" {
		why = fmt.Sprintf("version %d cannot read data written with the new schema", e.Version)
	}
	return fmt.Sprintf("not %s compatible (%s): %s: %s", e.Level, why, where, e.Reason)
}

// Is matches ErrIncompatible.
func (e *Error) Is(target error) bool { return target == ErrIncompatible }

// Check reports whether schema may be registered under a subject at level
// whose registered schemas are registered, oldest first. It returns an
// *Error for the first incompatibility (newest version first), or an error
// naming the schema that does not parse.
func Check(level Level, schema string, registered []string) error {
	if level == None || len(registered) == 0 {
		return nil
	}
	next, err := avro.ParseWithCache(schema, "", &avro.SchemaCache{})
	if err != nil {
		return fmt.Errorf("the new schema: %w", err)
	}
	from := len(registered) - 1
	if level.transitive() {
		from = 0
	}
	sc := avro.NewSchemaCompatibility()
	for v := len(registered) - 1; v >= from; v-- {
		old, err := avro.ParseWithCache(registered[v], "", &avro.SchemaCache{})
		if err != nil {
			return fmt.Errorf("registered version %d: %w", v+1, err)
		}
		if level.backward() {
			if err := sc.Compatible(next, old); err != nil {
				field, reason := locate(sc, next, old, "", err)
				return &Error{Level: level, Version: v + 1, Direction: "backward", Field: field, Reason: reason}
			}
		}
		if level.forward() {
			if err := sc.Compatible(old, next); err != nil {
				field, reason := locate(sc, old, next, "", err)
				return &Error{Level: level, Version: v + 1, Direction: "forward", Field: field, Reason: reason}
			}
		}
	}
	return nil
}

// locate walks reader and writer, which do not resolve (err), to the
// deepest field whose types do not, and returns its dotted path and the
// reason.
func locate(sc *avro.SchemaCompatibility, reader, writer avro.Schema, path string, err error) (string, string) {
	reader, writer = single(reader), single(writer)
	rr, ok1 := reader.(*avro.RecordSchema)
	wr, ok2 := writer.(*avro.RecordSchema)
	if !ok1 || !ok2 {
		switch r := reader.(type) {
		case *avro.ArraySchema:
			if w, ok := writer.(*avro.ArraySchema); ok {
				if e := sc.Compatible(r.Items(), w.Items()); e != nil {
					return locate(sc, r.Items(), w.Items(), path+"[]", e)
				}
			}
		case *avro.MapSchema:
			if w, ok := writer.(*avro.MapSchema); ok {
				if e := sc.Compatible(r.Values(), w.Values()); e != nil {
					return locate(sc, r.Values(), w.Values(), path+"{}", e)
				}
			}
		}
		return path, err.Error()
	}
	for _, rf := range rr.Fields() {
		fp := rf.Name()
		if path != "" {
			fp = path + "." + fp
		}
		wf := writerField(wr, rf)
		if wf == nil {
			if !rf.HasDefault() {
				return fp, "the reading schema has the field, the writing schema does not, and it has no default"
			}
			continue
		}
		if e := sc.Compatible(rf.Type(), wf.Type()); e != nil {
			return locate(sc, rf.Type(), wf.Type(), fp, e)
		}
	}
	return path, err.Error()
}

// writerField is the field of w that the reader's field rf reads: by name,
// else by one of rf's aliases.
func writerField(w *avro.RecordSchema, rf *avro.Field) *avro.Field {
	for _, f := range w.Fields() {
		if f.Name() == rf.Name() {
			return f
		}
	}
	for _, a := range rf.Aliases() {
		for _, f := range w.Fields() {
			if f.Name() == a {
				return f
			}
		}
	}
	return nil
}

// single is the one non-null branch of a nullable union (Flink's NULL
// columns), else s.
func single(s avro.Schema) avro.Schema {
	u, ok := s.(*avro.UnionSchema)
	if !ok {
		return s
	}
	var other avro.Schema
	for _, t := range u.Types() {
		if t.Type() == avro.Null {
			continue
		}
		if other != nil {
			return s
		}
		other = t
	}
	if other == nil {
		return s
	}
	return other
}
