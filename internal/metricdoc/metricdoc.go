// Package metricdoc is the table of the metrics that connectd's components
// emit: each metric's name, kind, labels and a one-line help text. Each
// component declares its own metrics in one place (its metrics file) and
// registers them here from init; the prometheus exporter
// (plugins/metrics/prometheus) writes the help texts into the HELP lines of
// /metrics, and each component's docs test checks its spec's Metrics section
// against its table.
//
// A help text says what the metric counts or measures and in what unit, in
// one line. The unit of a timer is left out: the exporter adds it, because
// it depends on the exporter's config (nanoseconds in a summary, seconds in a
// histogram).
package metricdoc

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Kind is what a metric is, as a Benthos component creates it.
type Kind string

// Metric kinds.
const (
	Counter Kind = "counter"
	Gauge   Kind = "gauge"
	Timer   Kind = "timer"
)

// Metric is one metric family.
type Metric struct {
	// Name is the metric's name as the component creates it.
	Name string
	Kind Kind
	// Labels are the label keys the component sets (Benthos adds its own,
	// `label` and `path`, to each).
	Labels []string
	// Help is one line: what the metric counts or measures, and its unit
	// (none for a timer, see the package doc).
	Help string
}

var table = struct {
	sync.RWMutex
	byName map[string]Metric
}{byName: map[string]Metric{}}

// Register adds metrics to the table. It panics on a metric without a name,
// a known kind or a one-line help text, and on a name registered before
// with a different definition: both are programming errors that the
// package's init would hit at once.
func Register(ms ...Metric) {
	table.Lock()
	defer table.Unlock()
	for _, m := range ms {
		if err := m.check(); err != nil {
			panic(err)
		}
		if old, ok := table.byName[m.Name]; ok && !old.equal(m) {
			panic(fmt.Sprintf("metricdoc: metric %s registered twice with different definitions: %+v and %+v", m.Name, old, m))
		}
		table.byName[m.Name] = m
	}
}

func (m Metric) check() error {
	switch {
	case m.Name == "":
		return fmt.Errorf("metricdoc: a metric without a name: %+v", m)
	case m.Kind != Counter && m.Kind != Gauge && m.Kind != Timer:
		return fmt.Errorf("metricdoc: metric %s: unknown kind %q", m.Name, m.Kind)
	case strings.TrimSpace(m.Help) == "" || strings.ContainsAny(m.Help, "\n\r"):
		return fmt.Errorf("metricdoc: metric %s: the help text must be one non-empty line, got %q", m.Name, m.Help)
	}
	return nil
}

func (m Metric) equal(o Metric) bool {
	return m.Name == o.Name && m.Kind == o.Kind && slices.Equal(m.Labels, o.Labels) && m.Help == o.Help
}

// Lookup returns the metric registered under name.
func Lookup(name string) (Metric, bool) {
	table.RLock()
	defer table.RUnlock()
	m, ok := table.byName[name]
	return m, ok
}

// All returns every registered metric, by name.
func All() []Metric {
	table.RLock()
	defer table.RUnlock()
	out := make([]Metric, 0, len(table.byName))
	for _, m := range table.byName {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Metric) int { return strings.Compare(a.Name, b.Name) })
	return out
}
