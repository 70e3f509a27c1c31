package compat

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// rec is a record schema named r with the given fields (JSON objects).
func rec(fields ...string) string {
	return fmt.Sprintf(`{"type":"record","name":"r","fields":[%s]}`, strings.Join(fields, ","))
}

const (
	aInt      = `{"name":"a","type":"int"}`
	aLong     = `{"name":"a","type":"long"}`
	aString   = `{"name":"a","type":"string"}`
	bOptional = `{"name":"b","type":["null","string"],"default":null}`
	bRequired = `{"name":"b","type":"string"}`
	cNested   = `{"name":"c","type":["null",{"type":"record","name":"n","fields":[{"name":"x","type":"int"}]}],"default":null}`
	cNestedX  = `{"name":"c","type":["null",{"type":"record","name":"n","fields":[{"name":"x","type":"string"}]}],"default":null}`
	dArray    = `{"name":"d","type":{"type":"array","items":"int"}}`
	dArrayStr = `{"name":"d","type":{"type":"array","items":"string"}}`
)

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		level      Level
		next       string
		registered []string
		// wantField is the field named in the error; "-" means compatible.
		wantField string
		wantDir   string
		wantVer   int
	}{
		{"first version", Backward, rec(aInt), nil, "-", "", 0},
		{"none allows anything", None, rec(aString), []string{rec(aInt)}, "-", "", 0},
		{"backward: an optional field added", Backward, rec(aInt, bOptional), []string{rec(aInt)}, "-", "", 0},
		{"backward: a required field added", Backward, rec(aInt, bRequired), []string{rec(aInt)}, "b", "backward", 1},
		{"backward: a field removed", Backward, rec(aInt), []string{rec(aInt, bRequired)}, "-", "", 0},
		{"forward: a required field removed", Forward, rec(aInt), []string{rec(aInt, bRequired)}, "b", "forward", 1},
		{"forward: a required field added", Forward, rec(aInt, bRequired), []string{rec(aInt)}, "-", "", 0},
		{"backward: int widened to long", Backward, rec(aLong), []string{rec(aInt)}, "-", "", 0},
		{"forward: int widened to long", Forward, rec(aLong), []string{rec(aInt)}, "a", "forward", 1},
		{"full: int widened to long", Full, rec(aLong), []string{rec(aInt)}, "a", "forward", 1},
		{"backward: type changed", Backward, rec(aString), []string{rec(aInt)}, "a", "backward", 1},
		{"backward: nested field type changed", Backward, rec(aInt, cNestedX), []string{rec(aInt, cNested)}, "c.x", "backward", 1},
		{"backward: array items changed", Backward, rec(dArrayStr), []string{rec(dArray)}, "d[]", "backward", 1},
		{"backward only checks the latest", Backward, rec(aInt), []string{rec(aString), rec(aInt)}, "-", "", 0},
		{"backward transitive checks them all", BackwardTransitive, rec(aInt), []string{rec(aString), rec(aInt)}, "a", "backward", 1},
		{"full transitive", FullTransitive, rec(aInt, bOptional), []string{rec(aInt), rec(aInt, bOptional)}, "-", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Check(tc.level, tc.next, tc.registered)
			if tc.wantField == "-" {
				if err != nil {
					t.Fatalf("want compatible, got %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrIncompatible) {
				t.Fatalf("want an *Error, got %v", err)
			}
			if e.Field != tc.wantField || e.Direction != tc.wantDir || e.Version != tc.wantVer || e.Level != tc.level {
				t.Fatalf("got field %q direction %s version %d level %s (%v), want field %q %s version %d",
					e.Field, e.Direction, e.Version, e.Level, err, tc.wantField, tc.wantDir, tc.wantVer)
			}
			if !strings.Contains(err.Error(), "field "+tc.wantField) {
				t.Fatalf("the message does not name the field: %v", err)
			}
		})
	}
}

func TestCheckBadSchema(t *testing.T) {
	t.Parallel()
	if err := Check(Backward, "{", []string{rec(aInt)}); err == nil || !strings.Contains(err.Error(), "the new schema") {
		t.Fatalf("got %v", err)
	}
	if err := Check(Backward, rec(aInt), []string{"{"}); err == nil || !strings.Contains(err.Error(), "registered version 1") {
		t.Fatalf("got %v", err)
	}
}

func TestParseLevel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Level{"": Backward, "full_transitive": FullTransitive, "NONE": None} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := ParseLevel("SIDEWAYS"); err == nil {
		t.Error("SIDEWAYS accepted")
	}
}
