package prometheus

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/metricdoc"
)

// exporter implements service.MetricsExporter on its own registry, so two
// streams in one process (streams mode, tests) do not collide.
type exporter struct {
	conf config
	log  *service.Logger
	reg  *prometheus.Registry

	mu struct {
		sync.Mutex
		vecs map[string]registered
	}

	stopPush chan struct{}
	pushDone chan struct{}
}

// registered is one metric family: its collector and label keys, kept so a
// second request for the same name reuses it.
type registered struct {
	kind      string
	labelKeys []string
	collector prometheus.Collector
}

func newExporter(c config, log *service.Logger) (*exporter, error) {
	e := &exporter{conf: c, log: log, reg: prometheus.NewRegistry()}
	e.mu.vecs = map[string]registered{}
	if c.addProcessMetrics {
		if err := e.reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
			return nil, fmt.Errorf("registering process metrics: %w", err)
		}
	}
	if c.addGoMetrics {
		if err := e.reg.Register(collectors.NewGoCollector()); err != nil {
			return nil, fmt.Errorf("registering Go metrics: %w", err)
		}
	}
	if c.pushURL != "" {
		e.stopPush = make(chan struct{})
		e.pushDone = make(chan struct{})
		go e.pushLoop(push.New(c.pushURL, c.pushJobName).Gatherer(e.reg))
	}
	return e, nil
}

// HandlerFunc is picked up by Benthos and served at /metrics and /stats.
func (e *exporter) HandlerFunc() http.HandlerFunc {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{}).ServeHTTP
}

func (e *exporter) pushLoop(p *push.Pusher) {
	defer close(e.pushDone)
	t := time.NewTicker(e.conf.pushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := p.Push(); err != nil {
				e.log.Errorf("pushing metrics to %s: %v", e.conf.pushURL, err)
			}
		case <-e.stopPush:
			if err := p.Push(); err != nil {
				e.log.Errorf("final push of metrics to %s: %v", e.conf.pushURL, err)
			}
			return
		}
	}
}

// help is the HELP text of metric raw (name once sanitised): its text in
// internal/metricdoc, with unit appended for a timer (the exporter decides
// it: nanoseconds in a summary, seconds in a histogram), or a neutral text
// for a metric that no table documents.
func help(raw, name string, kind metricdoc.Kind, unit string) string {
	m, ok := metricdoc.Lookup(raw)
	if !ok {
		m, ok = metricdoc.Lookup(name)
	}
	if !ok {
		text := fmt.Sprintf("%s %s (no help text registered)", kind, name)
		if unit != "" {
			text += ", in " + unit
		}
		return text
	}
	if unit == "" {
		return m.Help
	}
	return strings.TrimSuffix(m.Help, ".") + ", in " + unit + "."
}

// sanitise maps a Benthos metric or label name to a valid Prometheus name.
func sanitise(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', r == ':':
			b.WriteRune(r)
		case r >= '0' && r <= '9' && i > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func sanitiseAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = sanitise(n)
	}
	return out
}

// family returns the collector registered under name, creating it with mk if
// absent. ok is false when the name is taken by another kind or label set.
func (e *exporter) family(kind, name string, labelKeys []string, mk func() prometheus.Collector) (prometheus.Collector, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, exists := e.mu.vecs[name]; exists {
		if r.kind != kind || !slices.Equal(r.labelKeys, labelKeys) {
			e.log.Warnf("metric %s: already registered as %s with labels %v, not %s with labels %v; ignoring the second", name, r.kind, r.labelKeys, kind, labelKeys)
			return nil, false
		}
		return r.collector, true
	}
	c := mk()
	if err := e.reg.Register(c); err != nil {
		e.log.Warnf("metric %s: %v", name, err)
		return nil, false
	}
	e.mu.vecs[name] = registered{kind: kind, labelKeys: labelKeys, collector: c}
	return c, true
}

func (e *exporter) NewCounterCtor(raw string, labelKeys ...string) service.MetricsExporterCounterCtor {
	name, labelKeys := sanitise(raw), sanitiseAll(labelKeys)
	c, ok := e.family("counter", name, labelKeys, func() prometheus.Collector {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help(raw, name, metricdoc.Counter, "")}, labelKeys)
	})
	return func(labelValues ...string) service.MetricsExporterCounter {
		if !ok {
			return noop{}
		}
		return counter{c.(*prometheus.CounterVec).WithLabelValues(labelValues...)}
	}
}

func (e *exporter) NewGaugeCtor(raw string, labelKeys ...string) service.MetricsExporterGaugeCtor {
	name, labelKeys := sanitise(raw), sanitiseAll(labelKeys)
	c, ok := e.family("gauge", name, labelKeys, func() prometheus.Collector {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help(raw, name, metricdoc.Gauge, "")}, labelKeys)
	})
	return func(labelValues ...string) service.MetricsExporterGauge {
		if !ok {
			return noop{}
		}
		return gauge{c.(*prometheus.GaugeVec).WithLabelValues(labelValues...)}
	}
}

func (e *exporter) NewTimerCtor(raw string, labelKeys ...string) service.MetricsExporterTimerCtor {
	name, labelKeys := sanitise(raw), sanitiseAll(labelKeys)
	if e.conf.useHistogramTiming {
		c, ok := e.family("histogram", name, labelKeys, func() prometheus.Collector {
			buckets := e.conf.histogramBuckets
			if len(buckets) == 0 {
				buckets = prometheus.DefBuckets
			}
			return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help(raw, name, metricdoc.Timer, "seconds"), Buckets: buckets}, labelKeys)
		})
		return func(labelValues ...string) service.MetricsExporterTimer {
			if !ok {
				return noop{}
			}
			return timer{obs: c.(*prometheus.HistogramVec).WithLabelValues(labelValues...), scale: 1e-9}
		}
	}
	c, ok := e.family("summary", name, labelKeys, func() prometheus.Collector {
		return prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: name, Help: help(raw, name, metricdoc.Timer, "nanoseconds"), Objectives: e.conf.summaryObjectives}, labelKeys)
	})
	return func(labelValues ...string) service.MetricsExporterTimer {
		if !ok {
			return noop{}
		}
		return timer{obs: c.(*prometheus.SummaryVec).WithLabelValues(labelValues...), scale: 1}
	}
}

func (e *exporter) Close(ctx context.Context) error {
	if e.stopPush == nil {
		return nil
	}
	close(e.stopPush)
	select {
	case <-e.pushDone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type counter struct{ c prometheus.Counter }

func (c counter) Incr(n int64)          { c.c.Add(float64(n)) }
func (c counter) IncrFloat64(n float64) { c.c.Add(n) }

type gauge struct{ g prometheus.Gauge }

func (g gauge) Set(v int64)          { g.g.Set(float64(v)) }
func (g gauge) SetFloat64(v float64) { g.g.Set(v) }

type timer struct {
	obs   prometheus.Observer
	scale float64
}

func (t timer) Timing(ns int64) { t.obs.Observe(float64(ns) * t.scale) }

type noop struct{}

func (noop) Incr(int64)          {}
func (noop) IncrFloat64(float64) {}
func (noop) Set(int64)           {}
func (noop) SetFloat64(float64)  {}
func (noop) Timing(int64)        {}
