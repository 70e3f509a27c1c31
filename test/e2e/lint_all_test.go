package e2e

import (
	"strings"
	"testing"
	"time"
)

// `connectd lint` reports every problem of a config in one run: a type error
// and an enum error of the same component, cross-field errors, a document
// check and Benthos's own findings (an unknown field, an enum option).
func TestLintReportsEverythingAtOnce(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "all.yaml", `
input:
  kafka_source:
    seed_brokers: [ 127.0.0.1:9 ]
    topics: [ in ]
    consumer_group: g
    readers: many
    start_from: yesterday
    batch_size: 100
    checkpoint_limit: 10
pipeline:
  processors:
    - mapping: root = this
output:
  kafka_sink:
    seed_brokers: [ 127.0.0.1:9 ]
    topic: out
    delivery_guarantee: exactly_once
    transactional_id_prefix: app
    max_in_flight: lots
    compression: brotli
    no_such_field: 1
`)
	out, code := runCLI(t, time.Minute, "lint", path)
	if code == 0 {
		t.Fatalf("lint passed:\n%s", out)
	}
	for _, want := range []string{
		// kafka_source: a type error, an enum error, a cross-field error
		`(7,14) field readers: expected an integer, got string "many"`,
		`field start_from: unknown value "yesterday" (want one of earliest, latest, committed, timestamp, offsets)`,
		"field checkpoint_limit: 10 is below batch_size 100",
		// kafka_sink: a type error and an enum error, ours and Benthos's
		`(20,20) field max_in_flight: expected an integer, got string "lots"`,
		`field compression: unknown codec "brotli"`,
		"value brotli is not a valid option for this field",
		// Benthos: an unknown field
		"field no_such_field not recognised",
		// a document check
		"pipeline: field threads: must be 1 when kafka_source feeds kafka_sink with delivery_guarantee exactly_once",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lint output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("lint output:\n%s", out)
	}
}

// `connectd create` prints, for each component of the bundle and for the
// pairs people start from, a config that passes `connectd lint` unchanged.
// (create takes inputs, processors and outputs; the event_window buffer and
// the prometheus exporter are covered by the bundle's create-style test.)
func TestCreateOutputLints(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		"kafka_source",
		"/cel",
		"/table_decode",
		"/table_encode",
		"//kafka_sink",
		"kafka_source//kafka_sink",
		"kafka_source//drop",
		"kafka_source/table_decode,cel,table_encode/kafka_sink",
	} {
		t.Run(strings.ReplaceAll(expr, "/", "_"), func(t *testing.T) {
			t.Parallel()
			conf, code := runCLI(t, time.Minute, "create", expr)
			if code != 0 {
				t.Fatalf("create %s: exit %d:\n%s", expr, code, conf)
			}
			path := writeFile(t, "created.yaml", conf)
			if out, code := runCLI(t, time.Minute, "lint", path); code != 0 {
				t.Errorf("lint of `connectd create %s`: exit %d:\n%s\nconfig:\n%s", expr, code, out, conf)
			}
		})
	}
}
