package metricdoc

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// This file reads the Metrics section of a component's description, so that
// a test can hold the component's docs and its table to each other.
//
// The section starts at a line "### Metrics" and ends at the next heading
// of that level or higher. Each metric is a list item that starts with its
// name, or several names separated by " / ", in backticks, then in
// parentheses its kind (plural with several names) and its label keys in
// backticks:
//
//	- `kafka_source_lag` (gauge, `topic`, `partition`): ...
//	- `kafka_sink_txn_begun` / `kafka_sink_txn_committed` (counters): ...
//
// Other lines of the section (prose, continuation lines) are not read.

var (
	itemNames = regexp.MustCompile("^- ((?:`[a-z0-9_]+`(?: / )?)+) \\(([a-z]+)((?:, `[a-z0-9_]+`)*)\\)")
	backticks = regexp.MustCompile("`([a-z0-9_]+)`")
)

// Documented returns the metrics listed in the Metrics section of a
// component's description, without help texts, in the order listed.
func Documented(description string) ([]Metric, error) {
	lines := strings.Split(description, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "### Metrics" })
	if start < 0 {
		return nil, errors.New("the description has no \"### Metrics\" section")
	}
	var out []Metric
	for _, l := range lines[start+1:] {
		if strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "### ") {
			break
		}
		if !strings.HasPrefix(l, "- `") {
			continue
		}
		m := itemNames.FindStringSubmatch(l)
		if m == nil {
			return nil, fmt.Errorf("the Metrics item %q does not read \"- `name` (kind, `label`, ...): help\"", l)
		}
		kind := Kind(strings.TrimSuffix(m[2], "s"))
		var labels []string
		for _, lm := range backticks.FindAllStringSubmatch(m[3], -1) {
			labels = append(labels, lm[1])
		}
		for _, nm := range backticks.FindAllStringSubmatch(m[1], -1) {
			out = append(out, Metric{Name: nm[1], Kind: kind, Labels: labels})
		}
	}
	return out, nil
}

// Agree reports every difference between the Metrics section of a
// component's description and its table: a metric in one and not in the
// other, or listed with another kind or other labels.
func Agree(description string, table []Metric) error {
	docs, err := Documented(description)
	if err != nil {
		return err
	}
	var errs []error
	byName := map[string]Metric{}
	for _, d := range docs {
		if _, dup := byName[d.Name]; dup {
			errs = append(errs, fmt.Errorf("metric %s is listed twice in the docs", d.Name))
		}
		byName[d.Name] = d
	}
	for _, t := range table {
		d, ok := byName[t.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("metric %s (%s) is in the table but not in the docs' Metrics section", t.Name, t.Kind))
			continue
		}
		delete(byName, t.Name)
		if d.Kind != t.Kind || !slices.Equal(d.Labels, t.Labels) {
			errs = append(errs, fmt.Errorf("metric %s: the docs say %s with labels %v, the table %s with labels %v",
				t.Name, d.Kind, d.Labels, t.Kind, t.Labels))
		}
	}
	for _, d := range docs {
		if _, left := byName[d.Name]; left {
			errs = append(errs, fmt.Errorf("metric %s is in the docs' Metrics section but not in the table", d.Name))
		}
	}
	return errors.Join(errs...)
}
