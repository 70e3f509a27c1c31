package speclint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func init() {
	Register("speclint_test_output", []Field{
		{"max_in_flight", Int},
		{"enabled", Bool},
		{"timeout", Duration},
		{"batching.count", Int},
	})
}

func TestCheckYAML(t *testing.T) {
	t.Setenv("SPECLINT_TEST_MAX", "8")
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"clean", `
output:
  speclint_test_output:
    max_in_flight: 4
    enabled: true
    timeout: 1s
`, nil},
		{"env vars substituted first", `
output:
  speclint_test_output:
    max_in_flight: ${SPECLINT_TEST_MAX}
    timeout: ${SPECLINT_TEST_UNSET:250ms}
`, nil},
		{"wrong scalars named with their lines", `
output:
  speclint_test_output:
    max_in_flight: lots
    enabled: sometimes
    batching:
      count: ten
`, []string{
			`(4,3) speclint_test_output: field max_in_flight: expected an integer, got string "lots"`,
			`(5,3) speclint_test_output: field enabled: expected true or false, got string "sometimes"`,
			`(7,3) speclint_test_output: field batching.count: expected an integer, got string "ten"`,
		}},
		{"nested inside other components", `
output:
  broker:
    outputs:
      - speclint_test_output:
          timeout: soon
`, []string{`(6,9) speclint_test_output: field timeout: expected a Go duration`}},
		{"unregistered components are ignored", `
output:
  other:
    max_in_flight: lots
`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := CheckYAML([]byte(c.yaml))
			if len(got) != len(c.want) {
				t.Fatalf("got %q, want %d problems like %q", got, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d = %q, want prefix %q", i, got[i], w)
				}
			}
		})
	}
}

func TestCheckFilesExpandsSuperPaths(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "nested")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(sub, "bad.yaml")
	if err := os.WriteFile(bad, []byte("output:\n  speclint_test_output:\n    enabled: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "good.yml"), []byte("output:\n  speclint_test_output:\n    enabled: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := CheckFiles([]string{dir + "/..."})
	if err == nil || !strings.Contains(err.Error(), bad+"(3,3) speclint_test_output: field enabled") {
		t.Fatalf("CheckFiles = %v", err)
	}
	if err := CheckFiles([]string{filepath.Join(dir, "*.yml")}); err != nil {
		t.Fatalf("clean file: %v", err)
	}
}
