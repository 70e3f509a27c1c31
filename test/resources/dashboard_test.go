package resources

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestDashboardShape checks resources/grafana/connectd.json as Grafana
// would need it: panels on the 24-column grid without overlaps, each with
// the dashboard's Prometheus data source and queries, the variables the
// queries use, and the panels issue 15 asks for.
func TestDashboardShape(t *testing.T) {
	t.Parallel()
	d := readDashboard(t)
	if d.UID == "" || d.Title == "" || d.Schema < 30 {
		t.Errorf("uid %q, title %q, schemaVersion %d: want a uid, a title and a current schema", d.UID, d.Title, d.Schema)
	}

	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Type == "query" && (v.Datasource == nil || v.Datasource.UID != "${datasource}") {
			t.Errorf("variable %s: data source %+v, want the ${datasource} variable", v.Name, v.Datasource)
		}
	}
	for name, typ := range map[string]string{"datasource": "datasource", "job": "query", "instance": "query", "topic": "query"} {
		if vars[name] != typ {
			t.Errorf("variable %s: type %q, want %q", name, vars[name], typ)
		}
	}

	ids := map[int]bool{}
	type cell struct{ x, y int }
	taken := map[cell]string{}
	titles := map[string]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[cell{x, y}]; ok {
					t.Errorf("panel %q overlaps panel %q at %d,%d", p.Title, other, x, y)
				}
				taken[cell{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		titles[p.Title] = true
		if p.Description == "" {
			t.Errorf("panel %q: no description (say what the metric is and which alert or doc section goes with it)", p.Title)
		}
		if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: data source %+v, want prometheus ${datasource}", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q: no queries", p.Title)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %q: refId %q empty or repeated", p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q %s: empty expression", p.Title, tg.RefID)
			}
			if tg.Datasource == nil || tg.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q %s: data source %+v, want ${datasource}", p.Title, tg.RefID, tg.Datasource)
			}
			for _, m := range reVariable.FindAllStringSubmatch(tg.Expr, -1) {
				if !strings.HasPrefix(m[1], "__") && vars[m[1]] == "" {
					t.Errorf("panel %q %s: uses $%s, which is not a variable of the dashboard", p.Title, tg.RefID, m[1])
				}
			}
		}
	}
	for _, want := range []string{
		// The seed's four.
		"Consumer lag per topic", "Transaction duration against interval", "Transaction commit success rate", "Consumption rate per partition",
		// Issue 15's additions.
		"Watermark lag per partition", "Paused partitions", "Fenced producers and aborted transactions", "Error rate",
		"Records per partition and reader", "Bytes per partition and reader", "Partitions per reader", "Imbalance",
	} {
		if !titles[want] {
			t.Errorf("no panel %q", want)
		}
	}
}

// TestDashboardPromQLParses hands every query of the dashboard (Grafana's
// variables replaced) to promtool as a rule file: promtool check rules
// parses each with Prometheus's own parser.
func TestDashboardPromQLParses(t *testing.T) {
	t.Parallel()
	pt := promtool(t)
	exprs := dashboardExprs(t, readDashboard(t))
	wheres := make([]string, 0, len(exprs))
	for w := range exprs {
		wheres = append(wheres, w)
	}
	sort.Strings(wheres)
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for i, w := range wheres {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard_query_%d", i), Expr: exprs[w]})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard_rules.yml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCmd(pt, "check", "rules", f)
	if err != nil {
		// Name the queries: promtool says "group dashboard, rule N".
		var list strings.Builder
		for i, w := range wheres {
			fmt.Fprintf(&list, "  dashboard_query_%d = %s: %s\n", i, w, rules[i].Expr)
		}
		t.Fatalf("promtool check rules on the dashboard's queries: %v\n%s\n%s", err, out, list.String())
	}
}
