// Package metrictest is a Benthos metrics exporter for tests that records
// the metric families a component creates and the values it sets, so that
// a test can read them by label and hold the families to the component's
// table (internal/metricdoc).
package metrictest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/metricdoc"
)

// benthosLabels are the labels Benthos adds to a component's metrics.
var benthosLabels = []string{"label", "path"}

// Recorder is a service.MetricsExporter that keeps, per series, a counter's
// total, a gauge's last value and a timer's observations: their count and
// their sum. A series is keyed `name{k=v,...}` with the component's own
// labels in the order it declared them (Benthos's label and path left out).
type Recorder struct {
	mu       sync.Mutex
	families map[string]metricdoc.Metric
	values   map[string]int64
	sums     map[string]int64
}

// New returns an empty Recorder.
func New() *Recorder {
	return &Recorder{families: map[string]metricdoc.Metric{}, values: map[string]int64{}, sums: map[string]int64{}}
}

// Key is the key of the series of name with labels, given as key, value
// pairs in declaration order.
func Key(name string, labels ...string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%s", labels[i], labels[i+1])
	}
	b.WriteByte('}')
	return b.String()
}

// Get returns a counter's total, a gauge's last value or a timer's number
// of observations; 0 for a series never set.
func (r *Recorder) Get(key string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.values[key]
}

// Sum returns the sum of a timer's observations.
func (r *Recorder) Sum(key string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sums[key]
}

// Total returns the sum over the series of name (counters: the family's
// total).
func (r *Recorder) Total(name string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for k, v := range r.values {
		if strings.HasPrefix(k, name+"{") {
			n += v
		}
	}
	return n
}

// Series returns the keys of the series of name that were set, sorted.
func (r *Recorder) Series(name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k := range r.values {
		if strings.HasPrefix(k, name+"{") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Families returns the metric families created, by name, without help.
func (r *Recorder) Families() []metricdoc.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]metricdoc.Metric, 0, len(r.families))
	for _, m := range r.families {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b metricdoc.Metric) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// CheckFamilies reports each family created whose name starts with prefix
// and that table does not hold with the same kind and labels.
func (r *Recorder) CheckFamilies(t testing.TB, prefix string, table []metricdoc.Metric) {
	t.Helper()
	byName := map[string]metricdoc.Metric{}
	for _, m := range table {
		byName[m.Name] = m
	}
	for _, f := range r.Families() {
		if !strings.HasPrefix(f.Name, prefix) {
			continue
		}
		m, ok := byName[f.Name]
		switch {
		case !ok:
			t.Errorf("metric %s (%s, labels %v) is created but not in the table", f.Name, f.Kind, f.Labels)
		case m.Kind != f.Kind || !slices.Equal(m.Labels, f.Labels):
			t.Errorf("metric %s is created as %s with labels %v, the table says %s with labels %v", f.Name, f.Kind, f.Labels, m.Kind, m.Labels)
		}
	}
}

// family records a family and returns a function that keys a series.
func (r *Recorder) family(name string, kind metricdoc.Kind, keys []string) func(values []string) string {
	var own []int
	var labels []string
	for i, k := range keys {
		if !slices.Contains(benthosLabels, k) {
			own = append(own, i)
			labels = append(labels, k)
		}
	}
	r.mu.Lock()
	r.families[name] = metricdoc.Metric{Name: name, Kind: kind, Labels: labels}
	r.mu.Unlock()
	return func(values []string) string {
		kv := make([]string, 0, 2*len(own))
		for _, i := range own {
			v := ""
			if i < len(values) {
				v = values[i]
			}
			kv = append(kv, keys[i], v)
		}
		return Key(name, kv...)
	}
}

func (r *Recorder) update(key string, f func(v, sum int64) (int64, int64)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.values[key], r.sums[key] = f(r.values[key], r.sums[key])
}

// NewCounterCtor implements service.MetricsExporter.
func (r *Recorder) NewCounterCtor(name string, keys ...string) service.MetricsExporterCounterCtor {
	key := r.family(name, metricdoc.Counter, keys)
	return func(values ...string) service.MetricsExporterCounter {
		return series{r: r, key: key(values)}
	}
}

// NewGaugeCtor implements service.MetricsExporter.
func (r *Recorder) NewGaugeCtor(name string, keys ...string) service.MetricsExporterGaugeCtor {
	key := r.family(name, metricdoc.Gauge, keys)
	return func(values ...string) service.MetricsExporterGauge {
		return series{r: r, key: key(values)}
	}
}

// NewTimerCtor implements service.MetricsExporter.
func (r *Recorder) NewTimerCtor(name string, keys ...string) service.MetricsExporterTimerCtor {
	key := r.family(name, metricdoc.Timer, keys)
	return func(values ...string) service.MetricsExporterTimer {
		return series{r: r, key: key(values)}
	}
}

// Close implements service.MetricsExporter.
func (*Recorder) Close(context.Context) error { return nil }

type series struct {
	r   *Recorder
	key string
}

func (s series) Incr(n int64) {
	s.r.update(s.key, func(v, sum int64) (int64, int64) { return v + n, sum })
}
func (s series) IncrFloat64(n float64) {
	s.r.update(s.key, func(v, sum int64) (int64, int64) { return v + int64(n), sum })
}
func (s series) Set(n int64) { s.r.update(s.key, func(_, sum int64) (int64, int64) { return n, sum }) }
func (s series) SetFloat64(n float64) {
	s.r.update(s.key, func(_, sum int64) (int64, int64) { return int64(n), sum })
}
func (s series) Timing(ns int64) {
	s.r.update(s.key, func(v, sum int64) (int64, int64) { return v + 1, sum + ns })
}

// Register registers r with env as the metrics exporter `name`, for a
// stream's `metrics: {<name>: {}}`.
func (r *Recorder) Register(env *service.Environment, name string) error {
	return env.RegisterMetricsExporter(name, service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Logger) (service.MetricsExporter, error) { return r, nil })
}
