package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `connectd --help` presents connectd, and the config it suggests creating
// is one of connectd's (Benthos's help says `create kafka//file`, which
// fails here).
func TestHelpNamesConnectd(t *testing.T) {
	t.Parallel()
	out, code := runCLI(t, 30*time.Second, "--help")
	if code != 0 {
		t.Fatalf("connectd --help exit %d:\n%s", code, out)
	}
	for _, want := range []string{"connectd - ", "connectd create kafka_source//kafka_sink", "connectd schema", "completion"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"mundane", "kafka//file", "benthos"} {
		if strings.Contains(strings.ToLower(out), bad) {
			t.Errorf("help says %q:\n%s", bad, out)
		}
	}
	out, code = runCLI(t, 30*time.Second, "--version")
	if first, _, _ := strings.Cut(out, "\n"); code != 0 || !strings.HasPrefix(first, "connectd ") {
		t.Errorf("connectd --version exit %d, first line %q, want it to name connectd:\n%s", code, first, out)
	}
}

// A run's log lines carry @service=connectd, and its HTTP server listens
// on loopback unless the config says otherwise: the default of
// http.address is 127.0.0.1:4195.
func TestRunLogsNameConnectdAndListenOnLoopback(t *testing.T) {
	t.Parallel()
	conf := writeFile(t, "logs.yaml", `
logger:
  level: info
  format: logfmt
input:
  generate:
    count: 1
    interval: ""
    mapping: root = "x"
output:
  drop: {}
`)
	// A port taken by another run only costs an error line after the
	// listening line this test reads.
	out, code := runCLI(t, 60*time.Second, "run", conf)
	if code != 0 {
		t.Fatalf("run exit %d:\n%s", code, out)
	}
	lines := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(l, "level=") {
			continue
		}
		lines++
		if !strings.Contains(l, "@service=connectd") {
			t.Errorf("log line without @service=connectd: %s", l)
		}
	}
	if lines < 3 {
		t.Fatalf("%d log lines, want the run's info lines:\n%s", lines, out)
	}
	if !strings.Contains(out, "Listening for HTTP requests at: http://127.0.0.1:4195") {
		t.Errorf("the HTTP server does not listen on 127.0.0.1:4195 by default:\n%s", out)
	}

	out, code = runCLI(t, 30*time.Second, "echo", conf)
	if code != 0 || !strings.Contains(out, "http:\n  enabled: true\n  address: 127.0.0.1:4195\n") {
		t.Errorf("echo exit %d, want http.address 127.0.0.1:4195:\n%s", code, out)
	}
	// Opening it is one field.
	out, code = runCLI(t, 30*time.Second, "echo", "--set", "http.address=0.0.0.0:4195", conf)
	if code != 0 || !strings.Contains(out, "  address: 0.0.0.0:4195\n") {
		t.Errorf("echo --set http.address exit %d:\n%s", code, out)
	}
}

// `connectd schema` prints the editor schema, or writes it with -o: a JSON
// Schema with connectd's components and their docs.
func TestSchemaCommand(t *testing.T) {
	t.Parallel()
	out, code := runCLI(t, 60*time.Second, "schema")
	if code != 0 {
		t.Fatalf("schema exit %d:\n%.2000s", code, out)
	}
	var doc struct {
		Schema      string                    `json:"$schema"`
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("schema output is not JSON: %v\n%.2000s", err, out)
	}
	if doc.Schema != "http://json-schema.org/draft-07/schema#" {
		t.Errorf("$schema %q", doc.Schema)
	}
	for _, def := range []string{"input.kafka_source", "output.kafka_sink", "buffer.event_window", "processor.cel", "metrics.prometheus", "input.generate"} {
		if d, ok := doc.Definitions[def]; !ok || d["description"] == nil {
			t.Errorf("definition %s missing or without description", def)
		}
	}
	path := filepath.Join(t.TempDir(), "connectd.schema.json")
	if out, code := runCLI(t, 60*time.Second, "schema", "-o", path); code != 0 {
		t.Fatalf("schema -o exit %d:\n%s", code, out)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(written)) != strings.TrimSpace(out) {
		t.Error("schema -o wrote something else than schema prints")
	}
}
