package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// recordMarker is in every testdata/lint_run config, in a log processor of
// its input: a run that reads a record prints it.
const recordMarker = "RECORD-READ"

// lintRunCase is one file of testdata/lint_run: a config that breaks one
// lint rule of connectd, with `# want: <message>` lines.
type lintRunCase struct {
	name, path string
	wants      []string
	kafka      bool // it reads ${LINT_RUN_TOPIC} from ${LINT_RUN_BROKERS}
}

func loadLintRunCases(t *testing.T) []lintRunCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot(t), "test", "e2e", "testdata", "lint_run", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no lint_run cases: %v", err)
	}
	var cases []lintRunCase
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := lintRunCase{name: strings.TrimSuffix(filepath.Base(p), ".yaml"), path: p, kafka: bytes.Contains(data, []byte("${LINT_RUN_"))}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if w, ok := strings.CutPrefix(sc.Text(), "# want: "); ok {
				c.wants = append(c.wants, w)
			}
		}
		if len(c.wants) == 0 || !bytes.Contains(data, []byte(recordMarker)) {
			t.Fatalf("%s: needs `# want:` lines and a log processor printing %s on its input", p, recordMarker)
		}
		cases = append(cases, c)
	}
	return cases
}

// runCLIEnv runs connectd with extra environment variables and returns its
// combined output and exit code; a run that outlives timeout is killed and
// reported.
func runCLIEnv(t *testing.T, timeout time.Duration, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, connectdBin(t), args...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("connectd %v did not stop within %s:\n%s", args, timeout, out.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running connectd %v: %v", args, err)
	}
	return out.String(), code
}

// Every lint rule of connectd (each check of each component's Go validator,
// a field of the wrong type, each document check) stops `connectd run`
// before a record is read, with the message `connectd lint` prints, naming
// the field. The configs whose input is kafka_source read a topic that holds
// records.
func TestLintEqualsRun(t *testing.T) {
	t.Parallel()
	cases := loadLintRunCases(t)
	var env []string
	haveKafka := os.Getenv("CONNECTD_KAFKA_BROKERS") != "" || os.Getenv("CONNECTD_REQUIRE_KAFKA") == "1"
	if haveKafka {
		brokers := kafkatest.Broker(t)
		topic := kafkatest.NewTopic(t, brokers, "e2e-lint-run", 2)
		cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.DefaultProduceTopic(topic))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = kafkatest.ProduceN(ctx, cl, 20, func(i int64) *kgo.Record { return kgo.StringRecord(fmt.Sprintf(`{"id":"%d"}`, i)) })
		cancel()
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
		env = []string{"LINT_RUN_BROKERS=" + brokers, "LINT_RUN_TOPIC=" + topic}
	}
	expand := func(s string) string {
		return os.Expand(s, func(k string) string {
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, k+"="); ok {
					return v
				}
			}
			return "$" + k
		})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.kafka && !haveKafka {
				kafkatest.Broker(t) // skips, or fails with CONNECTD_REQUIRE_KAFKA=1
			}
			lintOut, code := runCLIEnv(t, time.Minute, env, "lint", c.path)
			if code == 0 {
				t.Fatalf("lint accepted the config:\n%s", lintOut)
			}
			runOut, code := runCLIEnv(t, time.Minute, env, "run", "--set", "http.enabled=false", c.path)
			if code == 0 {
				t.Errorf("run exited 0:\n%s", runOut)
			}
			if strings.Contains(runOut, recordMarker) {
				t.Errorf("run read a record before stopping:\n%s", runOut)
			}
			for _, w := range c.wants {
				w = expand(w)
				if !strings.Contains(w, "field ") {
					t.Errorf("want %q does not name a field", w)
				}
				if !strings.Contains(lintOut, w) {
					t.Errorf("lint output lacks %q:\n%s", w, lintOut)
				}
				if !strings.Contains(runOut, w) {
					t.Errorf("run output lacks %q:\n%s", w, runOut)
				}
			}
		})
	}
}
