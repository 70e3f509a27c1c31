// Package changelogtest prints the changes of a changelog codec for tests:
// one line per row, its kind as Flink prints it and the row as the json
// format writes it.
package changelogtest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/changelog"
	"github.com/connectd/connectd/schema/format/json"
)

// Render prints changes of rows of type row, then the metadata of the
// first change (sorted by key) when it has any.
func Render(row *schema.Type, changes []changelog.Change) (string, error) {
	f, err := json.New(row, json.Options{MapNullKeyMode: json.MapNullKeyFail, MapNullKeyLiteral: "null"})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range changes {
		data, err := f.Encode(c.Row)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s %s\n", c.Kind, data)
	}
	if len(changes) > 0 && changes[0].Meta != nil {
		keys := make([]string, 0, len(changes[0].Meta))
		for k := range changes[0].Meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "meta %s = %s\n", k, show(changes[0].Meta[k]))
		}
	}
	return b.String(), nil
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + show(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = show(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case interface{ Format(string) string }:
		return x.Format("2006-01-02T15:04:05.999999999Z07:00")
	}
	return fmt.Sprint(v)
}

// Codec is what RunFiles decodes with.
type Codec interface {
	DecodeChanges(data []byte) ([]changelog.Change, error)
	ReadMetadata()
}

// Case is a record file of testdata decoded with options.
type Case struct {
	File string
	Opts map[string]string
	// Meta asks for the metadata.
	Meta bool
	// Want is what Render prints, or "error: <part of the message>".
	Want string
}

// RunFiles decodes each case's testdata file with a codec that build
// makes from the case's options, and compares the rendered changes.
func RunFiles(t *testing.T, row *schema.Type, build func(opts map[string]string) (Codec, error), cases []Case) {
	t.Helper()
	for _, tc := range cases {
		name := tc.File
		for _, k := range sortedKeys(tc.Opts) {
			name += "/" + k + "=" + tc.Opts[k]
		}
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.File))
			if err != nil {
				t.Fatal(err)
			}
			c, err := build(tc.Opts)
			if err != nil {
				t.Fatal(err)
			}
			if tc.Meta {
				c.ReadMetadata()
			}
			changes, err := c.DecodeChanges(data)
			if want, ok := strings.CutPrefix(tc.Want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want one containing %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := Render(row, changes)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.Want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.Want)
			}
		})
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
