package kafkasource

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

func parseConfig(t *testing.T, yaml string) (Config, error) {
	t.Helper()
	pc, err := testSpec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatalf("parsing %q: %v", yaml, err)
	}
	return configFromParsed(pc)
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := parseConfig(t, `
seed_brokers: [ "b1:9092,b2:9092" ]
topics: [ "a, b", c, a ]
consumer_group: g
`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(c.Topics, want) {
		t.Errorf("topics %v, want %v", c.Topics, want)
	}
	if want := []string{"b1:9092", "b2:9092"}; !slices.Equal(c.Conn.SeedBrokers, want) {
		t.Errorf("seed brokers %v, want %v", c.Conn.SeedBrokers, want)
	}
	if c.StartFrom != StartCommitted || c.CommittedFallback != FallbackEarliest || c.IsolationLevel != ReadCommitted {
		t.Errorf("modes %s/%s/%s, want committed/earliest/read_committed", c.StartFrom, c.CommittedFallback, c.IsolationLevel)
	}
	if c.FetchMaxWait != 500*time.Millisecond {
		t.Errorf("fetch_max_wait %v, want 500ms", c.FetchMaxWait)
	}
	if c.CommitPeriod != 5*time.Second || c.CheckpointLimit != 8192 || c.BatchSize != 1024 {
		t.Errorf("commit_period %v checkpoint_limit %d batch_size %d, want 5s 8192 1024", c.CommitPeriod, c.CheckpointLimit, c.BatchSize)
	}
}

// Every problem is reported at once, each naming its field; the lint rule
// reports the same problems at lint time.
func TestConfigProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{
			name: "missing topics and group",
			yaml: `{seed_brokers: [ "b:9092" ], topics: [ " , " ], consumer_group: " "}`,
			want: []string{"field topics: at least one topic is required", "field consumer_group: a group id is required"},
		},
		{
			name: "numbers and durations",
			yaml: `{seed_brokers: [ "b:9092" ], topics: [ t ], consumer_group: g, commit_period: 0s, fetch_max_wait: -1s, batch_size: 0, checkpoint_limit: 0}`,
			want: []string{"field commit_period: must be", "field fetch_max_wait: must be", "field batch_size: must be at least 1", "field checkpoint_limit: must be at least 1"},
		},
		{
			name: "limit below batch size",
			yaml: `{seed_brokers: [ "b:9092" ], topics: [ t ], consumer_group: g, batch_size: 100, checkpoint_limit: 10}`,
			want: []string{"field checkpoint_limit: 10 is below batch_size 100"},
		},
		{
			name: "group protocol without group mode",
			yaml: `{seed_brokers: [ "b:9092" ], topics: [ t ], consumer_group: g, group_protocol: consumer}`,
			want: []string{"field group_protocol: only used with assignment: group"},
		},
	}
	linter := service.GlobalEnvironment().NewComponentConfigLinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig(t, tt.yaml)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("constructor error %q lacks %q", err, w)
				}
			}
			lints, err := linter.LintInputYAML([]byte("kafka_source: " + tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, l := range lints {
				all = append(all, l.What)
			}
			joined := strings.Join(all, "\n")
			for _, w := range tt.want {
				if !strings.Contains(joined, w) {
					t.Errorf("lints %q lack %q", joined, w)
				}
			}
		})
	}
}

func TestLintAcceptsValidConfig(t *testing.T) {
	t.Parallel()
	lints, err := service.GlobalEnvironment().NewComponentConfigLinter().LintInputYAML([]byte(`
kafka_source:
  seed_brokers: [ localhost:9092 ]
  topics: [ "a,b" ]
  consumer_group: g
  start_from: latest
  committed_fallback: error
  commit_period: 1s
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(lints) > 0 {
		t.Fatalf("unexpected lints: %v", lints)
	}
}

func TestLintRejectsUnknownMode(t *testing.T) {
	t.Parallel()
	lints, err := service.GlobalEnvironment().NewComponentConfigLinter().LintInputYAML([]byte(`
kafka_source:
  seed_brokers: [ localhost:9092 ]
  topics: [ a ]
  consumer_group: g
  start_from: sometime
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(lints) == 0 || !strings.Contains(lints[0].What, "sometime") {
		t.Fatalf("lints %v, want one about start_from: sometime", lints)
	}
	if _, err := parseConfig(t, `{seed_brokers: [ "b:9092" ], topics: [ t ], consumer_group: g, start_from: sometime}`); err == nil ||
		!strings.Contains(err.Error(), "field start_from: unknown value \"sometime\"") {
		t.Fatalf("constructor error %v, want one about start_from", err)
	}
}
