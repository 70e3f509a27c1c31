package speclint

import (
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
)

func lint(t *testing.T, rule string, conf map[string]any) []string {
	t.Helper()
	exe, err := bloblang.Parse(rule)
	if err != nil {
		t.Fatalf("rule does not parse: %v\n%s", err, rule)
	}
	res, err := exe.Query(conf)
	if err != nil {
		t.Fatalf("rule failed: %v", err)
	}
	var out []string
	for _, e := range res.([]any) {
		out = append(out, e.(string))
	}
	return out
}

var fields = []Field{
	{"max_in_flight", Int},
	{"ratio", Float},
	{"enabled", Bool},
	{"topic", String},
	{"period", Duration},
	{"seed_brokers", StringList},
	{"batching.count", Int},
	{"sasl", Object},
}

const crossRule = `root = [ if this.max_in_flight.or(1) < 1 { "field max_in_flight: must be at least 1" } else { null } ].filter(e -> e != null)`

func TestRuleTypeChecks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		conf map[string]any
		want []string // substrings, one per expected error, in order
	}{
		{"all absent", map[string]any{}, nil},
		{"all well typed", map[string]any{
			"max_in_flight": 4, "ratio": 0.5, "enabled": true, "topic": "t", "period": "1m30s",
			"seed_brokers": []any{"a:1"}, "batching": map[string]any{"count": 10}, "sasl": map[string]any{},
		}, nil},
		{"string for int", map[string]any{"max_in_flight": "lots"}, []string{`field max_in_flight: expected an integer, got string "lots"`}},
		{"fraction for int", map[string]any{"max_in_flight": 1.5}, []string{"field max_in_flight: expected an integer, got number 1.5"}},
		{"string for float", map[string]any{"ratio": "half"}, []string{"field ratio: expected a number"}},
		{"string for bool", map[string]any{"enabled": "yes please"}, []string{"field enabled: expected true or false"}},
		{"number for string", map[string]any{"topic": 5}, []string{"field topic: expected a string, got number 5"}},
		{"bad duration", map[string]any{"period": "5 seconds"}, []string{`field period: expected a Go duration`}},
		{"number for duration", map[string]any{"period": 5}, []string{`field period: expected a Go duration`}},
		{"empty list", map[string]any{"seed_brokers": []any{}}, nil},
		{"scalar for list", map[string]any{"seed_brokers": "a:1"}, []string{"field seed_brokers: expected a list of strings"}},
		{"list with a number", map[string]any{"seed_brokers": []any{"a:1", 2}}, []string{"field seed_brokers: expected a list of strings"}},
		{"nested", map[string]any{"batching": map[string]any{"count": "ten"}}, []string{"field batching.count: expected an integer"}},
		{"list for object", map[string]any{"sasl": []any{}}, []string{"field sasl: expected an object"}},
		{"several", map[string]any{"max_in_flight": "x", "period": "y"}, []string{"max_in_flight", "period"}},
		{"cross rule runs when types are fine", map[string]any{"max_in_flight": 0}, []string{"field max_in_flight: must be at least 1"}},
	}
	rule := Rule(fields, crossRule)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := lint(t, rule, c.conf)
			if len(got) != len(c.want) {
				t.Fatalf("got %d errors %q, want %d like %q", len(got), got, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("error %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestRuleWithoutCrossRule(t *testing.T) {
	t.Parallel()
	got := lint(t, Rule(fields, ""), map[string]any{"enabled": 1})
	if len(got) != 1 || !strings.Contains(got[0], "field enabled") {
		t.Fatalf("got %q", got)
	}
}
