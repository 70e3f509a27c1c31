package resources

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	reAlertName   = regexp.MustCompile(`\bConnectd[A-Z][A-Za-z]+\b`)
	reDocsSection = regexp.MustCompile(`See docs/troubleshooting\.md, ([^.]+)\.`)
)

// TestDocsCoverEveryAlert: docs/troubleshooting.md and resources/README.md
// name every alert of alerts.yml and no other, and each alert's "See
// docs/troubleshooting.md, <section>" points at sections that exist.
func TestDocsCoverEveryAlert(t *testing.T) {
	t.Parallel()
	alerts := alertNames(t)
	known := map[string]bool{}
	for _, a := range alerts {
		known[a] = true
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, rel := range []string{"docs/troubleshooting.md", "resources/README.md"} {
		doc := read(rel)
		for _, a := range alerts {
			if !strings.Contains(doc, "`"+a+"`") {
				t.Errorf("%s does not name alert %s", rel, a)
			}
		}
		for _, a := range reAlertName.FindAllString(doc, -1) {
			if !known[a] {
				t.Errorf("%s names %s, which is not an alert of resources/prometheus/alerts.yml", rel, a)
			}
		}
	}

	headings := map[string]bool{}
	for _, line := range strings.Split(read("docs/troubleshooting.md"), "\n") {
		if strings.HasPrefix(line, "## ") {
			headings[strings.TrimPrefix(line, "## ")] = true
		}
	}
	for _, m := range reDocsSection.FindAllStringSubmatch(read("resources/prometheus/alerts.yml"), -1) {
		for _, section := range strings.Split(m[1], " and ") {
			if !headings[section] {
				t.Errorf("alerts.yml points at docs/troubleshooting.md section %q, which does not exist", section)
			}
		}
	}
}
