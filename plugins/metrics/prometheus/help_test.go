package prometheus

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/metricdoc"
	// The bundle's components register their metrics' help texts.
	_ "github.com/connectd/connectd/plugins/buffer/eventwindow"
	_ "github.com/connectd/connectd/plugins/input/kafkasource"
	_ "github.com/connectd/connectd/plugins/output/kafkasink"
	_ "github.com/connectd/connectd/plugins/processor/tabledecode"
	_ "github.com/connectd/connectd/plugins/processor/tableencode"
)

// helpLines returns the HELP text of each family of a scrape.
func helpLines(t *testing.T, body string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(l, "# HELP "); ok {
			name, text, _ := strings.Cut(rest, " ")
			out[name] = text
		}
	}
	return out
}

// labelValues is one value per key, for a series of a family.
func labelValues(keys []string) []string {
	v := make([]string, len(keys))
	for i := range v {
		v[i] = "x"
	}
	return v
}

// Every metric of the table, registered with the exporter as its component
// registers it, is scraped with its own help text; a timer's names its unit.
func TestExporterHelpIsTheMetricsText(t *testing.T) {
	t.Parallel()
	for _, histogram := range []bool{false, true} {
		e := newTestExporter(t, map[bool]string{false: `{}`, true: `use_histogram_timing: true`}[histogram])
		all := metricdoc.All()
		for _, m := range all {
			switch m.Kind {
			case metricdoc.Counter:
				e.NewCounterCtor(m.Name, m.Labels...)(labelValues(m.Labels)...).Incr(1)
			case metricdoc.Gauge:
				e.NewGaugeCtor(m.Name, m.Labels...)(labelValues(m.Labels)...).Set(1)
			case metricdoc.Timer:
				e.NewTimerCtor(m.Name, m.Labels...)(labelValues(m.Labels)...).Timing(1)
			}
		}
		helps := helpLines(t, scrape(t, e))
		for _, m := range all {
			want := m.Help
			if m.Kind == metricdoc.Timer {
				unit := map[bool]string{false: "nanoseconds", true: "seconds"}[histogram]
				want = strings.TrimSuffix(m.Help, ".") + ", in " + unit + "."
			}
			if got, ok := helps[m.Name]; !ok {
				t.Errorf("histogram %v: %s is not in the scrape", histogram, m.Name)
			} else if got != want {
				t.Errorf("histogram %v: HELP of %s = %q, want %q", histogram, m.Name, got, want)
			}
		}
	}
}

// The tables hold the metrics of every component of the bundle and
// Benthos's own, each family the exporter sees.
func TestHelpTableCoversTheBundle(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"input_received", "output_sent", "processor_error", "output_latency_ns",
		"kafka_source_partition_records", "kafka_source_partition_bytes", "kafka_source_reader_partitions",
		"kafka_source_commit_failures", "kafka_source_lag", "kafka_source_failed",
		"kafka_sink_txn_duration_ns", "kafka_sink_txn_interval_ns", "kafka_sink_txn_aborted",
		"event_window_open", "table_decode_failed", "table_encode_skipped",
	} {
		if _, ok := metricdoc.Lookup(name); !ok {
			t.Errorf("%s has no help text", name)
		}
	}
}

// A metric that no table documents gets a neutral text naming its kind (a
// timer's with its unit), whatever the exporter made of its name.
func TestExporterHelpOfUnknownMetric(t *testing.T) {
	t.Parallel()
	e := newTestExporter(t, `{}`)
	e.NewGaugeCtor("custom.depth")().Set(3)
	e.NewTimerCtor("custom_wait_ns")().Timing(3)
	helps := helpLines(t, scrape(t, e))
	for name, want := range map[string]string{
		"custom_depth":   "gauge custom_depth (no help text registered)",
		"custom_wait_ns": "timer custom_wait_ns (no help text registered), in nanoseconds",
	} {
		if got := helps[name]; got != want {
			t.Errorf("HELP of %s = %q, want %q", name, got, want)
		}
	}
}
