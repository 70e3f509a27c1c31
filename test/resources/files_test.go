// Package resources tests the operational files under resources/: the
// Prometheus rules (promtool check and unit tests), the Grafana dashboard
// (its shape, and its PromQL through promtool), the Benthos resource files
// (lint and run with `connectd -r`), and, against a real broker and the
// built binary, that every metric the dashboard and the rules read is one a
// running pipeline exports.
package resources

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"

	"gopkg.in/yaml.v3"
)

// repoRoot is the module root.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func resourcePath(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(repoRoot(t), "resources", rel)
}

// ruleFile is the part of a Prometheus rule file these tests read.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record string `yaml:"record"`
			Alert  string `yaml:"alert"`
			Expr   string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func readRules(t testing.TB, rel string) ruleFile {
	t.Helper()
	b, err := os.ReadFile(resourcePath(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return f
}

// ruleExprs returns every expression of the rule files, by the rule's name.
func ruleExprs(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, rel := range []string{"prometheus/recording.yml", "prometheus/alerts.yml"} {
		for _, g := range readRules(t, rel).Groups {
			for _, r := range g.Rules {
				out[rel+": "+r.Record+r.Alert] = r.Expr
			}
		}
	}
	return out
}

// recordedNames returns the series names the recording rules record.
func recordedNames(t testing.TB) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, g := range readRules(t, "prometheus/recording.yml").Groups {
		for _, r := range g.Rules {
			out[r.Record] = true
		}
	}
	return out
}

// alertNames returns the alerts of alerts.yml.
func alertNames(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, g := range readRules(t, "prometheus/alerts.yml").Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r.Alert)
			}
		}
	}
	sort.Strings(out)
	return out
}

// dashboard is the part of a Grafana dashboard these tests read.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Schema     int     `json:"schemaVersion"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name    string          `json:"name"`
			Type    string          `json:"type"`
			Query   json.RawMessage `json:"query"`
			Current struct {
				Value any `json:"value"`
			} `json:"current"`
			Datasource *datasource `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Datasource  *datasource `json:"datasource"`
	GridPos     struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets []struct {
		RefID        string      `json:"refId"`
		Expr         string      `json:"expr"`
		LegendFormat string      `json:"legendFormat"`
		Datasource   *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

func readDashboard(t testing.TB) dashboard {
	t.Helper()
	b, err := os.ReadFile(resourcePath(t, "grafana/connectd.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("resources/grafana/connectd.json: %v", err)
	}
	return d
}

// dashboardExprs returns every PromQL expression of the dashboard's panels
// and query variables, by where it is, with Grafana's variables replaced
// (substituteVariables; a textbox variable by its default).
func dashboardExprs(t testing.TB, d dashboard) map[string]string {
	t.Helper()
	textboxes := map[string]string{}
	for _, v := range d.Templating.List {
		if v.Type == "textbox" {
			textboxes[v.Name] = fmt.Sprint(v.Current.Value)
		}
	}
	out := map[string]string{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out["panel "+p.Title+" "+tg.RefID] = substituteVariables(tg.Expr, textboxes)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: query: %v", v.Name, err)
		}
		if e, ok := labelValuesSelector(q.Query); ok {
			out["variable "+v.Name] = substituteVariables(e, textboxes)
		} else {
			t.Errorf("variable %s: query %q is not label_values(<selector>, <label>)", v.Name, q.Query)
		}
	}
	return out
}
