package schema_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/expr"
)

// evalClock is the fixed clock of the eval directive.
var evalClock = time.Date(2024, 3, 10, 7, 30, 0, 123456000, time.UTC)

// evalComputed runs the eval directive (see datadriven_test.go).
func evalComputed(t *testing.T, td *datadriven.TestData) string {
	var cols, exprs []string
	values := map[string]string{}
	for _, line := range strings.Split(td.Input, "\n") {
		if e, ok := strings.CutPrefix(line, "? "); ok {
			exprs = append(exprs, e)
			continue
		}
		decl, val, ok := strings.Cut(line, " = ")
		if !ok {
			t.Fatalf("%s: %q: want `name TYPE = <JSON>` or `? <sql>`", td.Pos, line)
		}
		cols = append(cols, decl)
		values[strings.Fields(decl)[0]] = val
	}
	ddl := "CREATE TABLE t (" + strings.Join(cols, ", ")
	for i, e := range exprs {
		ddl += fmt.Sprintf(", `c%d` AS %s", i, e)
	}
	ddl += ") WITH ('format' = 'json')"
	tables, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatalf("%s: %s: %v", td.Pos, ddl, err)
	}
	tb := tables[0]
	zone := time.UTC
	if td.HasArg("zone") {
		var z string
		td.ScanArgs(t, "zone", &z)
		if zone, err = schema.ParseTimeZone(z); err != nil {
			t.Fatal(err)
		}
	}
	row := map[string]any{}
	for _, c := range tb.Columns {
		if c.Kind == schema.Computed {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(values[c.Name]))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: column %s: %v", td.Pos, c.Name, err)
		}
		if row[c.Name], err = schema.Coerce(c.Type, v, c.Name); err != nil {
			t.Fatalf("%s: %v", td.Pos, err)
		}
	}
	var out []string
	// One environment per expression, so that one error does not hide the others.
	for i, e := range exprs {
		one := *tb
		one.Columns = nil
		for _, c := range tb.Columns {
			if c.Kind != schema.Computed || c.Name == fmt.Sprintf("c%d", i) {
				one.Columns = append(one.Columns, c)
			}
		}
		env, err := expr.NewEnvClock(&one, expr.Clock{Zone: zone, Now: func() time.Time { return evalClock }})
		if err != nil {
			out = append(out, fmt.Sprintf("%s: error: %s", e, abbreviate(strings.TrimPrefix(err.Error(), "table t: column "+fmt.Sprintf("c%d AS %s: ", i, e)))))
			continue
		}
		r := map[string]any{}
		for k, v := range row {
			r[k] = v
		}
		if err := env.EvalComputed(r, expr.Input{}); err != nil {
			out = append(out, fmt.Sprintf("%s: error: %v", e, err))
			continue
		}
		out = append(out, e+" = "+showValue(r[fmt.Sprintf("c%d", i)]))
	}
	return strings.Join(out, "\n")
}

func showValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999999")
	case []byte:
		return fmt.Sprintf("X'%x'", x)
	}
	return fmt.Sprintf("%v", v)
}
