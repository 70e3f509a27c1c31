package kafkasink

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/speclint"
)

// checkLintProblem lints doc and checks the problems about field: none when
// want is "", else exactly one, containing want.
func checkLintProblem(t *testing.T, doc, field, want string) {
	t.Helper()
	var found []string
	for _, p := range speclint.CheckYAML([]byte(doc)) {
		if strings.Contains(p.String(), field) {
			found = append(found, p.String())
		}
	}
	switch {
	case want == "" && len(found) > 0:
		t.Fatalf("unexpected problems %q", found)
	case want != "" && (len(found) != 1 || !strings.Contains(found[0], want)):
		t.Fatalf("problems %q, want one containing %q", found, want)
	}
}

func TestLintPipelineOrder(t *testing.T) {
	t.Parallel()
	const source = "input:\n  kafka_source: { seed_brokers: [ b:9092 ], topics: [ in ], consumer_group: g }\n"
	sink := func(guarantee string) string {
		return "output:\n  kafka_sink: { seed_brokers: [ b:9092 ], topic: out, delivery_guarantee: " + guarantee +
			", transactional_id_prefix: p }\n"
	}
	const procs = "pipeline:\n  processors: [ { mapping: 'root = this' } ]\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"default threads with processors", source + procs + sink("exactly_once"), "(3,1) pipeline: field threads: must be 1"},
		{"Flink spelling", source + procs + sink("exactly-once"), "field threads: must be 1"},
		{"two threads", source + "pipeline:\n  threads: 2\n  processors: [ { mapping: 'root = this' } ]\n" + sink("exactly_once"), "(4,12) pipeline: field threads: must be 1 when kafka_source feeds kafka_sink with delivery_guarantee exactly_once and the pipeline has processors, got 2"},
		{"one thread", source + "pipeline:\n  threads: 1\n  processors: [ { mapping: 'root = this' } ]\n" + sink("exactly_once"), ""},
		{"no processors", source + sink("exactly_once"), ""},
		{"at least once", source + procs + "output:\n  kafka_sink: { seed_brokers: [ b:9092 ], topic: out }\n", ""},
		{"not from kafka_source", "input:\n  generate: { mapping: 'root = {}' }\n" + procs + sink("exactly_once"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkLintProblem(t, tt.yaml, "field threads", tt.want)
		})
	}
}

func TestLintWindowBatching(t *testing.T) {
	t.Parallel()
	const head = "input:\n  kafka_source: { seed_brokers: [ b:9092 ], topics: [ in ], consumer_group: g }\n" +
		"buffer:\n  event_window: { type: tumbling, size: 1m, aggregates: { n: count } }\n"
	sink := func(guarantee, batching string) string {
		return "output:\n  kafka_sink:\n    seed_brokers: [ b:9092 ]\n    topic: out\n    delivery_guarantee: " + guarantee +
			"\n    transactional_id_prefix: p\n" + batching
	}
	for _, tt := range []struct {
		name, yaml, want string
	}{
		{"count without period", head + sink("exactly_once", "    batching: { count: 100 }\n"), "(11,5) kafka_sink: field batching: set a period"},
		{"byte_size without period", head + sink("exactly_once", "    batching: { byte_size: 1000 }\n"), "field batching: set a period"},
		{"count and period", head + sink("exactly_once", "    batching: { count: 100, period: 1s }\n"), ""},
		{"no batching", head + sink("exactly_once", ""), ""},
		{"at least once", head + sink("at_least_once", "    batching: { count: 100 }\n"), ""},
		{"no event_window", "input:\n  kafka_source: { seed_brokers: [ b:9092 ], topics: [ in ], consumer_group: g }\n" +
			sink("exactly_once", "    batching: { count: 100 }\n"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkLintProblem(t, tt.yaml, "field batching", tt.want)
		})
	}
}

// A kafka_source without a consumer group feeding an exactly_once
// kafka_sink is a lint error naming consumer_group; a group in YAML or in
// the source's table, or a sink that is not exactly_once, lints clean.
func TestLintSourceGroup(t *testing.T) {
	t.Parallel()
	source := func(fields string) string {
		return "input:\n  kafka_source: { seed_brokers: [ b:9092 ], topics: [ in ], start_from: earliest" + fields + " }\n"
	}
	tableSource := func(with string) string {
		return "input:\n  kafka_source:\n    ddl: |\n      CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'in', 'format' = 'raw', " +
			"'properties.bootstrap.servers' = 'b:9092', 'scan.startup.mode' = 'earliest-offset'" + with + ")\n"
	}
	sink := func(guarantee string) string {
		return "output:\n  kafka_sink: { seed_brokers: [ b:9092 ], topic: out, delivery_guarantee: " + guarantee + " }\n"
	}
	for _, tt := range []struct {
		name, yaml, want string
	}{
		{"no group, exactly_once", source("") + sink("exactly_once"),
			"(2,3) kafka_source: field consumer_group: required when kafka_source feeds kafka_sink with delivery_guarantee exactly_once"},
		{"empty group, Flink spelling", source(", consumer_group: ''") + sink("exactly-once"), "field consumer_group: required when"},
		{"table without a group", tableSource("") + sink("exactly_once"), "option 'properties.group.id' of the source's table"},
		{"group", source(", consumer_group: g") + sink("exactly_once"), ""},
		{"table with a group", tableSource(", 'properties.group.id' = 'g'") + sink("exactly_once"), ""},
		{"no group, at least once", source("") + sink("at_least_once"), ""},
		{"no group, not into kafka_sink", source("") + "output:\n  drop: {}\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkLintProblem(t, tt.yaml, "field consumer_group: required when", tt.want)
		})
	}
}
