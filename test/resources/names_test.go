package resources

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// PromQL without a parser: the names of the series an expression selects.
// The Prometheus module (promql/parser) would pull a large tree of
// dependencies into go.mod, so the expressions are parsed for real by
// promtool (TestDashboardPromQLParses, TestPromtool*); this only has to find
// metric names, which it does by dropping what cannot be one: string
// literals, label matchers, ranges, the label lists of by/without/on/
// ignoring/group_*, numbers and durations, keywords and function names.
var (
	reString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	reMatchers = regexp.MustCompile(`\{[^{}]*\}`)
	reRange    = regexp.MustCompile(`\[[^\[\]]*\]`)
	reLabelSet = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	reToken    = regexp.MustCompile(`\d[\w.]*|[a-zA-Z_:][a-zA-Z0-9_:]*\s*\(?`)
	keywords   = map[string]bool{
		"and": true, "or": true, "unless": true, "by": true, "without": true, "on": true, "ignoring": true,
		"group_left": true, "group_right": true, "offset": true, "bool": true, "inf": true, "nan": true, "atan2": true,
	}
)

// metricNames returns the sorted, distinct metric names in a PromQL
// expression, recording-rule names (with a colon) included.
func metricNames(expr string) []string {
	e := reString.ReplaceAllString(expr, `""`)
	e = reMatchers.ReplaceAllString(e, " ")
	e = reRange.ReplaceAllString(e, " ")
	e = reLabelSet.ReplaceAllString(e, " ")
	seen := map[string]bool{}
	for _, tok := range reToken.FindAllString(e, -1) {
		if tok[0] >= '0' && tok[0] <= '9' || strings.HasSuffix(tok, "(") {
			continue // a number or duration, or a function or aggregation
		}
		tok = strings.TrimSpace(tok)
		if keywords[strings.ToLower(tok)] {
			continue
		}
		seen[tok] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

var reMatcherKey = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)

// labelNames returns the sorted, distinct label names an expression
// groups or matches by (by, without, on, ignoring, group_left/right and
// label matchers), except job and instance, which Prometheus adds.
func labelNames(expr string) []string {
	e := reString.ReplaceAllString(expr, `""`)
	seen := map[string]bool{}
	for _, m := range reMatchers.FindAllString(e, -1) {
		for _, k := range reMatcherKey.FindAllStringSubmatch(m, -1) {
			seen[k[1]] = true
		}
	}
	for _, m := range reLabelSet.FindAllString(e, -1) {
		list := m[strings.Index(m, "(")+1 : len(m)-1]
		for _, l := range strings.Split(list, ",") {
			if l = strings.TrimSpace(l); l != "" {
				seen[l] = true
			}
		}
	}
	delete(seen, "job")
	delete(seen, "instance")
	delete(seen, "__name__")
	out := make([]string, 0, len(seen))
	for l := range seen {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

var reLabelValues = regexp.MustCompile(`^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)

// labelValuesSelector returns the series selector of a Grafana
// label_values(<selector>, <label>) variable query.
func labelValuesSelector(q string) (string, bool) {
	m := reLabelValues.FindStringSubmatch(q)
	if m == nil {
		return "", false
	}
	return m[1], true
}

var reVariable = regexp.MustCompile(`\$\{?(\w+)\}?`)

// substituteVariables replaces Grafana's variables in a panel's expression
// so that it is PromQL: $__rate_interval and the other interval variables
// by 5m, a textbox variable by its default, anything else (used in label
// matchers) by `.*`.
func substituteVariables(expr string, textboxes map[string]string) string {
	return reVariable.ReplaceAllStringFunc(expr, func(v string) string {
		name := strings.Trim(v, "${}")
		switch {
		case strings.HasPrefix(name, "__") && strings.Contains(name, "interval"):
			return "5m"
		case textboxes[name] != "":
			return textboxes[name]
		default:
			return ".*"
		}
	})
}

func TestMetricNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expr string
		want []string
	}{
		{`kafka_source_lag`, []string{"kafka_source_lag"}},
		{`sum by (job, instance, topic) (rate(kafka_source_records_received{topic=~"a|b", x="rate(y)"}[5m]))`, []string{"kafka_source_records_received"}},
		{`max by (job, instance) (x:y:rate5m) / avg by (job, instance) (x:y:rate5m)`, []string{"x:y:rate5m"}},
		{`kafka_sink_txn_fenced > 0 unless kafka_sink_txn_fenced offset 10m`, []string{"kafka_sink_txn_fenced"}},
		{"a_ns_sum / a_ns_count / 1e9 > 0.8 * b", []string{"a_ns_count", "a_ns_sum", "b"}},
		{`changes(up[30m]) >= 4 and on (job, instance) group by (job, instance) (last_over_time(input_received[1h]))`, []string{"input_received", "up"}},
		{`time() * 1000 - max by (topic) (w{q="1"} > 0)`, []string{"w"}},
		{`round(x, 0.001) or vector(0) == bool 1`, []string{"x"}},
		{`sum without (path) (rate(c[1m:10s]))`, []string{"c"}},
	}
	for _, c := range cases {
		if got := metricNames(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("metricNames(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

func TestLabelNames(t *testing.T) {
	t.Parallel()
	got := labelNames(`sum by (job, instance, cause) (rate(x{path="a,b", topic=~"t"}[5m])) and on (job, reader) y{quantile!="0.5"}`)
	want := []string{"cause", "path", "quantile", "reader", "topic"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSubstituteVariables(t *testing.T) {
	t.Parallel()
	got := substituteVariables(`count(x{job=~"$job",t=~"${topic}"}[$__rate_interval]) >= $checkpoint_limit`, map[string]string{"checkpoint_limit": "8192"})
	want := `count(x{job=~".*",t=~".*"}[5m]) >= 8192`
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// usedNames returns every metric name the dashboard and the rules read,
// with where each is used; recording-rule names are resolved to the
// recording rules (and must be recorded), not returned.
func usedNames(t *testing.T) map[string][]string {
	t.Helper()
	recorded := recordedNames(t)
	exprs := ruleExprs(t)
	for where, e := range dashboardExprs(t, readDashboard(t)) {
		exprs[where] = e
	}
	used := map[string][]string{}
	for where, e := range exprs {
		for _, n := range metricNames(e) {
			if strings.Contains(n, ":") {
				if !recorded[n] {
					t.Errorf("%s: reads %s, which no rule of resources/prometheus/recording.yml records", where, n)
				}
				continue
			}
			used[n] = append(used[n], where)
		}
	}
	for _, ws := range used {
		sort.Strings(ws)
	}
	return used
}
