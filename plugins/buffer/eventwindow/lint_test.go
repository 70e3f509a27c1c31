package eventwindow

import (
	"fmt"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/speclint"
)

// connectd lint warns when a window key that is not the Kafka key sits
// behind a kafka_source whose partitions other processes read too.
func TestLintWarnsOfKeysAcrossProcesses(t *testing.T) {
	for _, tc := range []struct {
		name, source, key string
		warn              bool
	}{
		{"group, key from the value", "assignment: group", `key: ${! json("country") }`, true},
		{"shard of two, key from the value", "shard: { index: 1, count: 2 }", `key: ${! json("country") }`, true},
		{"group, global window", "assignment: group", ``, true},
		{"group, Kafka key", "assignment: group", `key: ${! @kafka_key }`, false},
		{"group, Kafka key by meta", "assignment: group", `key: '${! meta("kafka_key") }'`, false},
		{"enumerator, key from the value", "assignment: enumerator", `key: ${! json("country") }`, false},
		{"shard of one", "shard: { index: 0, count: 1 }", `key: ${! json("country") }`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := fmt.Sprintf(`input:
  kafka_source:
    seed_brokers: [ localhost:9092 ]
    topics: [ orders ]
    consumer_group: g
    %s
buffer:
  event_window:
    size: 1m
    %s
    aggregates: { n: count }
output:
  drop: {}
`, tc.source, tc.key)
			var warnings []speclint.Problem
			for _, p := range speclint.CheckYAML([]byte(doc)) {
				if !p.Warning {
					t.Errorf("unexpected problem: %s", p)
					continue
				}
				warnings = append(warnings, p)
			}
			if !tc.warn {
				if len(warnings) > 0 {
					t.Errorf("warnings %v, want none", warnings)
				}
				return
			}
			if len(warnings) != 1 {
				t.Fatalf("warnings %v, want one", warnings)
			}
			w := warnings[0]
			for _, s := range []string{"event_window: field key", "not the Kafka key", "${! @kafka_key }", DocsRepartition} {
				if !strings.Contains(w.Message, s) {
					t.Errorf("warning %q does not say %q", w.Message, s)
				}
			}
			line := 10 // at key
			if tc.key == "" {
				line = 8 // at event_window
			}
			if w.Line != line {
				t.Errorf("warning at line %d, want %d", w.Line, line)
			}
		})
	}
}
