package metricdoc

import (
	"strings"
	"testing"
)

const desc = "Intro.\n\n### Metrics\n\nProse with `not_a_metric` in it.\n\n" +
	"- `a_total` / `a_bytes` (counters, `topic`, `partition`): records and bytes,\n" +
	"  continued with `other_name` on the next line.\n" +
	"- `a_lag` (gauge, `topic`): lag.\n" +
	"- `a_latency_ns` (timer): latency.\n\n" +
	"### Next section\n\n- `a_after` (gauge): not in the Metrics section.\n"

func TestDocumentedReadsTheMetricsSection(t *testing.T) {
	t.Parallel()
	got, err := Documented(desc)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a_total counter [topic partition]",
		"a_bytes counter [topic partition]",
		"a_lag gauge [topic]",
		"a_latency_ns timer []",
	}
	if len(got) != len(want) {
		t.Fatalf("documented %+v, want %v", got, want)
	}
	for i, m := range got {
		if s := m.Name + " " + string(m.Kind) + " [" + strings.Join(m.Labels, " ") + "]"; s != want[i] {
			t.Errorf("metric %d: %s, want %s", i, s, want[i])
		}
	}
}

func TestDocumentedRefusesAMalformedItem(t *testing.T) {
	t.Parallel()
	if _, err := Documented("### Metrics\n\n- `a_lag`: lag, no kind.\n"); err == nil || !strings.Contains(err.Error(), "a_lag") {
		t.Fatalf("error %v, want one quoting the item", err)
	}
	if _, err := Documented("no section"); err == nil {
		t.Fatal("a description without a Metrics section was accepted")
	}
}

func TestAgreeReportsEveryDifference(t *testing.T) {
	t.Parallel()
	table := []Metric{
		{Name: "a_total", Kind: Counter, Labels: []string{"topic", "partition"}, Help: "x"},
		{Name: "a_bytes", Kind: Counter, Labels: []string{"topic"}, Help: "x"}, // labels differ
		{Name: "a_lag", Kind: Counter, Labels: []string{"topic"}, Help: "x"},   // kind differs
		{Name: "a_missing", Kind: Gauge, Help: "x"},                            // not documented
	}
	err := Agree(desc, table)
	if err == nil {
		t.Fatal("no difference reported")
	}
	for _, want := range []string{
		"metric a_bytes: the docs say counter with labels [topic partition], the table counter with labels [topic]",
		"metric a_lag: the docs say gauge",
		"metric a_missing (gauge) is in the table but not in the docs",
		"metric a_latency_ns is in the docs' Metrics section but not in the table",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "a_total") {
		t.Errorf("a metric that agrees is reported:\n%v", err)
	}
	table = []Metric{table[0], {Name: "a_bytes", Kind: Counter, Labels: []string{"topic", "partition"}}, {Name: "a_lag", Kind: Gauge, Labels: []string{"topic"}}, {Name: "a_latency_ns", Kind: Timer}}
	if err := Agree(desc, table); err != nil {
		t.Errorf("agreeing docs and table: %v", err)
	}
}

func TestRegisterRefusesConflictsAndBadHelp(t *testing.T) {
	t.Parallel()
	m := Metric{Name: "metricdoc_test_metric", Kind: Gauge, Help: "A test metric."}
	Register(m, m) // the same definition twice is fine
	if got, ok := Lookup(m.Name); !ok || got.Help != m.Help {
		t.Fatalf("Lookup = %+v, %v", got, ok)
	}
	for name, bad := range map[string]Metric{
		"conflict":     {Name: m.Name, Kind: Counter, Help: "A test metric."},
		"no help":      {Name: "metricdoc_test_x", Kind: Gauge},
		"two lines":    {Name: "metricdoc_test_y", Kind: Gauge, Help: "One.\nTwo."},
		"unknown kind": {Name: "metricdoc_test_z", Kind: "histogram", Help: "x"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register accepted %+v", name, bad)
				}
			}()
			Register(bad)
		}()
	}
}

// Benthos's own families are documented, each in one line.
func TestBenthosFamiliesDocumented(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"input_received", "output_latency_ns", "processor_error", "batch_created"} {
		if m, ok := Lookup(name); !ok || m.Help == "" {
			t.Errorf("%s: %+v, %v", name, m, ok)
		}
	}
}
