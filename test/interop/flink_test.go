package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Environment of the interop tests. `make interop` sets
// CONNECTD_REQUIRE_INTEROP=1 (and the broker's and registry's variables), so
// a machine without Java or Maven fails the tests instead of skipping them.
const (
	envRequireInterop = "CONNECTD_REQUIRE_INTEROP"
	// envFlinkTimeout is the per-run limit in seconds (default flinkRunTimeout).
	envFlinkTimeout = "CONNECTD_FLINK_SQL_TIMEOUT"
)

// flinkRunTimeout bounds one run of scripts/flink-sql.sh: a JVM start, a
// MiniCluster, and one job per INSERT or SELECT statement of the script, on a
// loaded 2-core machine.
const flinkRunTimeout = 15 * time.Minute

// flinkColumn is a column of a query's result as Flink reports it.
type flinkColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// flinkRow is one row of a query's result: its change kind (+I, -U, +U,
// -D) and its values in the JSON forms of interop/flink's Json.java.
type flinkRow struct {
	Kind   string            `json:"kind"`
	Values []json.RawMessage `json:"row"`
}

// stmtResult is what one statement of a Flink run did.
type stmtResult struct {
	// Done is "ddl", "insert", "query" or "show" once it finished; "" when
	// it failed (Err) or the run ended before it.
	Done    string
	Err     string
	Columns []flinkColumn
	Rows    []flinkRow
}

// flinkScript is a SQL script for one Flink run: statements added one by
// one, each with its index, so a test finds the result of its own.
type flinkScript struct {
	stmts []string
	// conf are Flink options of the run (--conf key=value), such as
	// table.local-time-zone: the runner's executeSql does not take SET.
	conf map[string]string
}

// add appends a statement (without its ';') and returns its index.
func (s *flinkScript) add(stmt string) int {
	s.stmts = append(s.stmts, strings.TrimSpace(stmt))
	return len(s.stmts) - 1
}

// flinkLine is one JSON line of the runner (scripts/flink-sql.sh).
type flinkLine struct {
	Stmt    *int              `json:"stmt"`
	Columns []flinkColumn     `json:"columns"`
	Kind    string            `json:"kind"`
	Row     []json.RawMessage `json:"row"`
	Done    string            `json:"done"`
	Error   *string           `json:"error"`
}

// requireFlink skips the test when Java or Maven is missing, or fails it
// when CONNECTD_REQUIRE_INTEROP=1.
func requireFlink(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := fmt.Sprintf("Flink interop needs %s on PATH (Java 17+ and Maven: Flink's jars come from Maven Central): %v", tool, err)
			if os.Getenv(envRequireInterop) == "1" {
				t.Fatalf("%s (%s=1, so this is a failure)", msg, envRequireInterop)
			}
			t.Skip(msg)
		}
	}
}

// runFlink runs the script with scripts/flink-sql.sh and returns the result
// of each statement, by index. A statement that fails does not fail the
// test here: the caller decides (some tests expect Flink to refuse). The
// runner's stderr (build output, Flink's log tail) is logged when it exits
// non-zero.
func runFlink(t *testing.T, s *flinkScript) []stmtResult {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "script.sql")
	var b strings.Builder
	for _, st := range s.stmts {
		b.WriteString(st)
		b.WriteString(";\n\n")
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	timeout := flinkRunTimeout
	if v := os.Getenv(envFlinkTimeout); v != "" {
		sec, err := time.ParseDuration(v + "s")
		if err != nil {
			t.Fatalf("%s=%q: want seconds: %v", envFlinkTimeout, v, err)
		}
		timeout = sec
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []string{"run", "--timeout", fmt.Sprint(int(timeout.Seconds()))}
	for k, v := range s.conf {
		args = append(args, "--conf", k+"="+v)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "flink-sql.sh"), append(args, file)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("Flink SQL run of %d statements: %v (%s)", len(s.stmts), time.Since(start).Round(100*time.Millisecond), file)
	results := make([]stmtResult, len(s.stmts))
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var l flinkLine
		if err := json.Unmarshal(line, &l); err != nil || l.Stmt == nil || *l.Stmt < 0 || *l.Stmt >= len(results) {
			t.Fatalf("flink-sql.sh printed a line that is not a statement's result: %q (%v)", line, err)
		}
		r := &results[*l.Stmt]
		switch {
		case l.Error != nil:
			r.Err = *l.Error
		case l.Columns != nil:
			r.Columns = l.Columns
		case l.Kind != "":
			r.Rows = append(r.Rows, flinkRow{Kind: l.Kind, Values: l.Row})
		case l.Done != "":
			r.Done = l.Done
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading flink-sql.sh output: %v", err)
	}
	if err != nil {
		// Exit 1 means some statement failed, and its error is in the
		// results; anything else (a build failure, a timeout) is not a
		// result of the script.
		var ee *exec.ExitError
		if ctx.Err() != nil || !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("scripts/flink-sql.sh run %s: %v after %v\n%s", file, err, time.Since(start).Round(time.Second), stderr.String())
		}
		t.Logf("flink-sql.sh exited 1 (a statement failed); its stderr:\n%s", tail(stderr.String(), 40))
	}
	return results
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
