package prometheus

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

func newTestExporter(t *testing.T, yaml string) *exporter {
	t.Helper()
	pConf, err := Spec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := configFromParsed(pConf)
	if err != nil {
		t.Fatal(err)
	}
	e, err := newExporter(c, service.MockResources().Logger())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func scrape(t *testing.T, e *exporter) string {
	t.Helper()
	rec := httptest.NewRecorder()
	e.HandlerFunc()(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return string(body)
}

func TestExporterServesBenthosMetrics(t *testing.T) {
	t.Parallel()
	e := newTestExporter(t, `{}`)
	e.NewCounterCtor("input_received", "label", "path")("in", "root.input").Incr(3)
	g := e.NewGaugeCtor("kafka.lag", "topic")("orders")
	g.Set(7)
	e.NewTimerCtor("output_latency_ns", "label")("out").Timing(2_000_000)
	// Asking again for the same family reuses it rather than failing.
	e.NewCounterCtor("input_received", "label", "path")("in", "root.input").Incr(2)

	body := scrape(t, e)
	for _, want := range []string{
		`input_received{label="in",path="root.input"} 5`,
		`kafka_lag{topic="orders"} 7`,
		`output_latency_ns_sum{label="out"} 2e+06`,
		`output_latency_ns{label="out",quantile="0.99"} 2e+06`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q; got:\n%s", want, body)
		}
	}
}

func TestExporterHistogramSeconds(t *testing.T) {
	t.Parallel()
	e := newTestExporter(t, `
use_histogram_timing: true
histogram_buckets: [0.001, 0.01, 0.1]
`)
	e.NewTimerCtor("output_latency_ns")().Timing(5_000_000) // 5ms
	body := scrape(t, e)
	for _, want := range []string{
		`output_latency_ns_bucket{le="0.001"} 0`,
		`output_latency_ns_bucket{le="0.01"} 1`,
		`output_latency_ns_sum 0.005`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q; got:\n%s", want, body)
		}
	}
}

func TestExporterConflictingFamilyIsIgnored(t *testing.T) {
	t.Parallel()
	e := newTestExporter(t, `{}`)
	e.NewCounterCtor("x", "a")("1").Incr(1)
	// Same name as a gauge: must not panic, and must not disturb the counter.
	e.NewGaugeCtor("x")().Set(99)
	if body := scrape(t, e); !strings.Contains(body, `x{a="1"} 1`) || strings.Contains(body, "99") {
		t.Fatalf("unexpected scrape:\n%s", body)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml, wantErr string
	}{
		{"bad quantile", `summary_quantiles_objectives: [{quantile: 1.5, error: 0.1}]`, "quantile 1.5"},
		{"buckets not increasing", `histogram_buckets: [1, 0.5]`, "buckets must increase"},
		{"relative push url", `push_url: "pushgateway:9091"`, "push_url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pConf, err := Spec().ParseYAML(c.yaml, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = configFromParsed(pConf)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

func TestSanitise(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"input_received": "input_received",
		"kafka.lag-ms":   "kafka_lag_ms",
		"9lives":         "_lives",
		"a:b":            "a:b",
	} {
		if got := sanitise(in); got != want {
			t.Errorf("sanitise(%q) = %q, want %q", in, got, want)
		}
	}
}
