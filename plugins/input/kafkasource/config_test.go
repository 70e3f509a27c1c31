package kafkasource

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

func parseConfig(t testing.TB, yaml string) (Config, error) {
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
	if c.MaxUnackedBytes != 16<<20 || c.fetchMaxBytes() != 4<<20 {
		t.Errorf("max_unacknowledged_bytes %d (fetches of %d), want 16 MiB (fetches of 4 MiB)", c.MaxUnackedBytes, c.fetchMaxBytes())
	}
	if c.FetchMaxBytes = 10 << 20; c.fetchMaxBytes() != 10<<20 {
		t.Errorf("fetch_max_bytes 10 MiB: fetches of %d, want the 10 MiB set", c.fetchMaxBytes())
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
			name: "missing topics, blank group",
			yaml: `{seed_brokers: [ "b:9092" ], topics: [ " , " ], consumer_group: " "}`,
			want: []string{"field topics: at least one topic is required", `field consumer_group: " " is blank`},
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
			name: "byte bound below four fetches",
			yaml: `{seed_brokers: [ "b:9092" ], topics: [ t ], consumer_group: g, max_unacknowledged_bytes: 1048576}`,
			want: []string{"field max_unacknowledged_bytes: must be at least 4194304 (4 MiB: four fetches of one partition, max.partition.fetch.bytes), got 1048576"},
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

// A consumer group is optional; the settings that need one are refused
// without it, naming the fields, by the constructor and by lint alike.
// Configs without a group that need none construct and lint clean.
func TestConfigGroupOptional(t *testing.T) {
	t.Parallel()
	const base = "seed_brokers: [ 'b:9092' ]\ntopics: [ t ]\n"
	ddl := func(with string) string {
		return yamlDDL(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw', ` +
			`'properties.bootstrap.servers' = 'h:1'` + with + `)`)
	}
	tests := []struct {
		name string
		yaml string
		want []string // nil: no problem
	}{
		{"bounded read from earliest", base + "start_from: earliest\nstop_at: latest\n", nil},
		{"unbounded from latest", base + "start_from: latest\n", nil},
		{"from a timestamp", base + "start_from: timestamp\nstart_timestamp: 1700000000000\n", nil},
		{"from offsets", base + "start_from: offsets\nstart_offsets: { t: { 0: 5 } }\n", nil},
		{"reset_offsets with a group", base + "consumer_group: g\nstart_from: earliest\nreset_offsets: true\n", nil},
		{"table with a start mode", ddl(", 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'"), nil},
		{"table with a start mode, group in YAML", ddl("") + "consumer_group: g\n", nil},
		{"committed is the default", base,
			[]string{"field consumer_group: required with start_from: committed (the default)", "set consumer_group, or set start_from to earliest, latest, timestamp or offsets"}},
		{"committed written", base + "start_from: committed\n",
			[]string{"field consumer_group: required with start_from: committed"}},
		{"group mode", base + "start_from: committed\nassignment: group\n",
			[]string{"field consumer_group: required with start_from: committed", "field consumer_group: required with assignment: group"}},
		{"reset_offsets without a group", base + "start_from: earliest\nreset_offsets: true\n",
			[]string{"field reset_offsets: needs consumer_group"}},
		{"reset_offsets with committed", base + "consumer_group: g\nreset_offsets: true\n",
			[]string{"field reset_offsets: set start_from to where the offsets are reset to"}},
		{"reset_offsets in group mode", base + "consumer_group: g\nreset_offsets: true\nassignment: group\n",
			[]string{"field reset_offsets: not used with assignment: group", "field reset_offsets: set start_from"}},
		{"table without a group or start mode", ddl(""),
			[]string{"field consumer_group: required with start_from: committed", "set option 'properties.group.id' of table t (or consumer_group)",
				"set option 'scan.startup.mode' of table t to earliest-offset"}},
		{"table with group-offsets", ddl(", 'scan.startup.mode' = 'group-offsets'"),
			[]string{"field consumer_group: required with start_from: committed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig(t, tt.yaml)
			lintErr := service.NewStreamBuilder().SetYAML("input:\n  kafka_source:\n    " +
				strings.ReplaceAll(strings.TrimSpace(tt.yaml), "\n", "\n    ") + "\noutput:\n  drop: {}\n")
			if tt.want == nil {
				if err != nil {
					t.Errorf("config: %v", err)
				}
				if lintErr != nil {
					t.Errorf("lint: %v", lintErr)
				}
				return
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("config: want %q, got %v", w, err)
				}
				if lintErr == nil || !strings.Contains(lintErr.Error(), w) {
					t.Errorf("lint: want %q, got %v", w, lintErr)
				}
			}
		})
	}
}
