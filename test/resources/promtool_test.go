package resources

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// promtool returns the path of promtool (Debian's prometheus package). The
// tests that need it skip without it, unless CONNECTD_REQUIRE_PROMTOOL=1
// (set by .ci/run, which installs it).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CONNECTD_REQUIRE_PROMTOOL") == "1" {
			t.Fatalf("promtool not found and CONNECTD_REQUIRE_PROMTOOL=1: apt-get install prometheus")
		}
		t.Skip("promtool not found (apt-get install prometheus); CONNECTD_REQUIRE_PROMTOOL=1 makes this a failure")
	}
	return p
}

func runPromtool(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPromtoolCheckRules: both rule files parse and every expression is
// valid PromQL, as Prometheus itself loads them.
func TestPromtoolCheckRules(t *testing.T) {
	t.Parallel()
	runPromtool(t, resourcePath(t, "prometheus"), "check", "rules", "recording.yml", "alerts.yml")
}

// TestPromtoolTestRules runs the unit tests of resources/prometheus/tests.
func TestPromtoolTestRules(t *testing.T) {
	t.Parallel()
	dir := resourcePath(t, "prometheus")
	tests, err := filepath.Glob(filepath.Join(dir, "tests", "*.yml"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no promtool tests in %s/tests: %v", dir, err)
	}
	for i := range tests {
		tests[i], _ = filepath.Rel(dir, tests[i])
	}
	runPromtool(t, dir, append([]string{"test", "rules"}, tests...)...)
}

// TestEveryAlertIsUnitTested: each alert of alerts.yml has, in
// resources/prometheus/tests, an evaluation where it fires and one where it
// does not.
func TestEveryAlertIsUnitTested(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(resourcePath(t, "prometheus/tests/*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tests []struct {
				AlertRuleTest []struct {
					Alertname string `yaml:"alertname"`
					ExpAlerts []any  `yaml:"exp_alerts"`
				} `yaml:"alert_rule_test"`
			} `yaml:"tests"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range doc.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname] = true
				} else {
					quiet[a.Alertname] = true
				}
			}
		}
	}
	alerts := alertNames(t)
	if len(alerts) == 0 {
		t.Fatal("no alerts in resources/prometheus/alerts.yml")
	}
	var missing []string
	for _, a := range alerts {
		if !fires[a] {
			missing = append(missing, a+" (firing)")
		}
		if !quiet[a] {
			missing = append(missing, a+" (not firing)")
		}
	}
	for a := range fires {
		if !slices.Contains(alerts, a) {
			missing = append(missing, fmt.Sprintf("%s is tested but is not in alerts.yml", a))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("alerts without a promtool unit test in resources/prometheus/tests:\n  %s", strings.Join(missing, "\n  "))
	}
}

func runCmd(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}
