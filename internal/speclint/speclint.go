// Package speclint builds the Bloblang lint rules of connectd components.
//
// Benthos's linter reports unknown fields and invalid enum values but not a
// scalar of the wrong type (`max_in_flight: lots` lints clean and fails only
// at run time). Rule adds type checks for a component's own fields in front of
// its cross-field rule, so `connectd lint` names the field and the expected
// type, and the cross-field rule only runs on well-typed values.
package speclint

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the YAML type a field expects.
type Kind int

// Kinds of field values.
const (
	Int Kind = iota
	Float
	Bool
	String
	Duration
	StringList
	Object
)

// durationPattern matches Go durations as time.ParseDuration accepts them.
const durationPattern = `^[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$`

// Field is one field to type-check. Path is dotted from the component's
// config root, e.g. "batching.count".
type Field struct {
	Path string
	Kind Kind
}

func (f Field) check() string {
	v := "this." + f.Path
	var ok, want string
	switch f.Kind {
	case Int:
		ok, want = fmt.Sprintf(`%[1]s.type() == "number" && %[1]s.string().re_match("^-?[0-9]+$")`, v), "an integer"
	case Float:
		ok, want = fmt.Sprintf(`%s.type() == "number"`, v), "a number"
	case Bool:
		ok, want = fmt.Sprintf(`%s.type() == "bool"`, v), "true or false"
	case String:
		ok, want = fmt.Sprintf(`%s.type() == "string"`, v), "a string"
	case Duration:
		ok, want = fmt.Sprintf(`%[1]s.type() == "string" && %[1]s.trim().re_match(%[2]s)`, v, strconv.Quote(durationPattern)), `a Go duration such as "500ms", "5s" or "1m"`
	case StringList:
		ok, want = fmt.Sprintf(`%[1]s.type() == "array" && (%[1]s.length() == 0 || %[1]s.all(e -> e.type() == "string"))`, v), "a list of strings"
	case Object:
		ok, want = fmt.Sprintf(`%s.type() == "object"`, v), "an object"
	default:
		panic(fmt.Sprintf("speclint: unknown kind %d for %s", f.Kind, f.Path))
	}
	// Bloblang's && does not short-circuit errors away, so the type test is
	// wrapped in catch: a method that fails on the wrong type means "wrong".
	msg := strconv.Quote("field " + f.Path + ": expected " + want + ", got %s %v")
	return fmt.Sprintf(`if %[1]s != null && !(%[2]s).catch(false) { %[3]s.format(%[1]s.type(), %[1]s.format_json(no_indent: true).string()) } else { null }`,
		v, ok, msg)
}

// Rule returns a lint rule that reports type errors of fields and, only when
// there are none, runs rule: a Bloblang mapping that assigns root an array of
// error strings (or an empty array). rule may be empty.
func Rule(fields []Field, rule string) string {
	var b strings.Builder
	b.WriteString("let type_errors = [\n")
	for _, f := range fields {
		b.WriteString("  ")
		b.WriteString(f.check())
		b.WriteString(",\n")
	}
	b.WriteString("].filter(e -> e != null)\n")
	if strings.TrimSpace(rule) == "" {
		b.WriteString("root = $type_errors\n")
		return b.String()
	}
	b.WriteString("if $type_errors.length() > 0 {\n  root = $type_errors\n} else {\n")
	b.WriteString(rule)
	b.WriteString("\n}\n")
	return b.String()
}
