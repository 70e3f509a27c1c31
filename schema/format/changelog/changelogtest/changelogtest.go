// Package changelogtest prints the changes of a changelog codec for tests:
// one line per row, its kind as Flink prints it and the row as the json
// format writes it.
package changelogtest

import (
	"fmt"
	"sort"
	"strings"

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
