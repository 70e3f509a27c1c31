package kafkasource

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

func TestConfigBounds(t *testing.T) {
	t.Parallel()
	const base = "seed_brokers: [ \"b:9092\" ]\nconsumer_group: g\n"
	tests := []struct {
		name string
		yaml string
		want func(t *testing.T, c Config)
	}{
		{
			name: "timestamps in milliseconds and RFC 3339",
			yaml: "start_from: timestamp\nstart_timestamp: 1714521600000\nstop_at: timestamp\nstop_timestamp: 2024-05-02T00:00:00.5+02:00\n",
			want: func(t *testing.T, c Config) {
				if c.StartTimestamp != 1714521600000 || c.StopTimestamp != 1714600800500 {
					t.Errorf("timestamps %d, %d; want 1714521600000, 1714600800500", c.StartTimestamp, c.StopTimestamp)
				}
			},
		},
		{
			name: "timestamp as a string of digits",
			yaml: "start_from: timestamp\nstart_timestamp: \"42\"\n",
			want: func(t *testing.T, c Config) {
				if c.StartTimestamp != 42 || c.StopTimestamp != -1 {
					t.Errorf("timestamps %d, %d; want 42, -1", c.StartTimestamp, c.StopTimestamp)
				}
			},
		},
		{
			name: "offsets as maps and as Flink strings",
			yaml: "start_from: offsets\nstart_offsets: { a: { 0: 42, \"1\": 300 }, b: \"partition:0,offset:7; partition:3,offset:0;\" }\n" +
				"stop_at: offsets\nstop_offsets: { a: \"partition:1,offset:400\" }\n",
			want: func(t *testing.T, c Config) {
				want := map[topicPartition]int64{{"a", 0}: 42, {"a", 1}: 300, {"b", 0}: 7, {"b", 3}: 0}
				if !maps.Equal(c.StartOffsets, want) {
					t.Errorf("start offsets %v, want %v", c.StartOffsets, want)
				}
				if want := map[topicPartition]int64{{"a", 1}: 400}; !maps.Equal(c.StopOffsets, want) {
					t.Errorf("stop offsets %v, want %v", c.StopOffsets, want)
				}
			},
		},
		{
			name: "defaults",
			yaml: "",
			want: func(t *testing.T, c Config) {
				if c.StopAt != StopNone || c.Readers != 1 || c.Shard != (Shard{0, 1}) || c.StartTimestamp != -1 || c.StartOffsets != nil {
					t.Errorf("got stop_at %s readers %d shard %v start_timestamp %d start_offsets %v", c.StopAt, c.Readers, c.Shard, c.StartTimestamp, c.StartOffsets)
				}
			},
		},
		{
			name: "topic_pattern with exclude, discovery off",
			yaml: "topic_pattern: \"orders\\\\..*\"\ntopic_exclude: \".*\\\\.dlq\"\ndiscovery_interval: 0s\n",
			want: func(t *testing.T, c Config) {
				if !c.subscribed("orders.eu") || c.subscribed("orders.eu.dlq") || c.subscribed("xorders.eu") || c.DiscoveryInterval != 0 || c.discovers() {
					t.Errorf("pattern %v exclude %v discovery %v", c.TopicPattern, c.TopicExclude, c.DiscoveryInterval)
				}
			},
		},
		{
			name: "explicit partitions",
			yaml: "topics: []\npartitions: { a: [ 2, 0 ], b: [ 1 ] }\nstart_from: offsets\nstart_offsets: { b: { 1: 5 } }\n",
			want: func(t *testing.T, c Config) {
				if fmt.Sprint(c.Partitions) != "map[a:[0 2] b:[1]]" || c.discovers() {
					t.Errorf("partitions %v, discovers %v", c.Partitions, c.discovers())
				}
			},
		},
		{
			name: "group mode",
			yaml: "assignment: group\nreaders: 3\ncommitted_fallback: latest\n",
			want: func(t *testing.T, c Config) {
				if c.Assignment != AssignmentGroup || c.Readers != 3 || c.discovers() {
					t.Errorf("assignment %s readers %d discovers %v", c.Assignment, c.Readers, c.discovers())
				}
			},
		},
		{
			name: "readers and shard",
			yaml: "readers: 4\nshard: { index: 2, count: 3 }\n",
			want: func(t *testing.T, c Config) {
				if c.Readers != 4 || c.Shard != (Shard{2, 3}) {
					t.Errorf("readers %d shard %v", c.Readers, c.Shard)
				}
			},
		},
	}
	linter := service.GlobalEnvironment().NewComponentConfigLinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			yaml := base + tt.yaml
			if !strings.Contains(tt.yaml, "topics:") && !strings.Contains(tt.yaml, "topic_pattern:") {
				yaml += "topics: [ a, b ]\n"
			}
			c, err := parseConfig(t, yaml)
			if err != nil {
				t.Fatal(err)
			}
			tt.want(t, c)
			lints, err := linter.LintInputYAML([]byte("kafka_source:\n" + indent(yaml)))
			if err != nil {
				t.Fatal(err)
			}
			if len(lints) > 0 {
				t.Fatalf("lints of a valid config: %v", lints)
			}
		})
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}

// Each invalid combination is reported, naming the field, by the lint rule
// and by the constructor.
func TestConfigBoundsProblems(t *testing.T) {
	t.Parallel()
	const base = `seed_brokers: [ "b:9092" ], consumer_group: g`
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"stop_at offsets without offsets", `stop_at: offsets`, []string{"field stop_offsets: required with stop_at: offsets"}},
		{"stop_at timestamp without timestamp", `stop_at: timestamp`, []string{"field stop_timestamp: required with stop_at: timestamp"}},
		{"start_from timestamp without timestamp", `start_from: timestamp`, []string{"field start_timestamp: required with start_from: timestamp"}},
		{"start_from offsets without offsets", `start_from: offsets`, []string{"field start_offsets: required with start_from: offsets"}},
		{"timestamp without its mode", `start_timestamp: 5, stop_timestamp: 6`, []string{
			"field start_timestamp: only used with start_from: timestamp", "field stop_timestamp: only used with stop_at: timestamp"}},
		{"offsets without their mode", `start_offsets: { a: { 0: 1 } }, stop_offsets: { a: { 0: 1 } }`, []string{
			"field start_offsets: only used with start_from: offsets", "field stop_offsets: only used with stop_at: offsets"}},
		{"bad timestamp", `start_from: timestamp, start_timestamp: yesterday`, []string{"field start_timestamp: expected milliseconds since the Unix epoch or an RFC 3339 time"}},
		{"bad Flink offsets string", `start_from: offsets, start_offsets: { a: "partition:0;offset:1" }`, []string{"field start_offsets.a:"}},
		{"negative offset", `stop_at: offsets, stop_offsets: { a: { "0": -1 } }`, []string{"field stop_offsets.a:"}},
		{"offsets of a topic not read", `start_from: offsets, start_offsets: { other: { 0: 1 } }`, []string{`field start_offsets: topic "other" is not in topics`}},
		{"shard index out of range", `shard: { index: 2, count: 2 }`, []string{"field shard.index: must be in [0, shard.count) = [0, 2), got 2"}},
		{"shard count zero", `shard: { count: 0 }`, []string{"field shard.count: must be at least 1, got 0"}},
		{"readers zero", `readers: 0`, []string{"field readers: must be between 1 and 256, got 0"}},
		{"topics and topic_pattern", `topics: [ a ], topic_pattern: "a.*"`, []string{"field topics: set only one of topics, topic_pattern and partitions"}},
		{"bad topic_pattern", `topics: [], topic_pattern: "("`, []string{"field topic_pattern: \"(\" is not a regular expression"}},
		{"topic_exclude without topic_pattern", `topic_exclude: "b"`, []string{"field topic_exclude: only used with topic_pattern"}},
		{"partitions not a list", `topics: [], partitions: { a: 3 }`, []string{"field partitions.a: expected a non-empty list of partition numbers"}},
		{"negative discovery_interval", `discovery_interval: -1s`, []string{"field discovery_interval: must not be negative"}},
		{"group mode with shard", `assignment: group, shard: { index: 0, count: 2 }`, []string{"field shard: not used with assignment: group"}},
		{"group mode bounded", `assignment: group, stop_at: latest`, []string{"field stop_at: must be none with assignment: group"}},
		{"group mode start_from", `assignment: group, start_from: earliest`, []string{"field start_from: must be committed with assignment: group"}},
		{"group mode fallback error", `assignment: group, committed_fallback: error`, []string{"field committed_fallback: must be earliest or latest with assignment: group"}},
		{"group mode explicit partitions", `topics: [], assignment: group, partitions: { a: [ 0 ] }`, []string{"field partitions: not used with assignment: group"}},
		{"unknown assignment", `assignment: rebalance`, []string{"field assignment: unknown value"}},
	}
	linter := service.GlobalEnvironment().NewComponentConfigLinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			yaml := "{" + base + ", " + tt.yaml + "}"
			if !strings.Contains(tt.yaml, "topics:") {
				yaml = "{" + base + ", topics: [ a ], " + tt.yaml + "}"
			}
			_, err := parseConfig(t, yaml)
			if err == nil {
				t.Fatal("no constructor error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("constructor error %q lacks %q", err, w)
				}
			}
			lints, err := linter.LintInputYAML([]byte("kafka_source: " + yaml))
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

// javaHashTable was produced with OpenJDK 17 (`java Owner.java`), printing
// for each topic String.hashCode() and, for n in {2, 3, 7, 16} and partition
// in {0, 5}, Flink's KafkaSourceEnumerator.getSplitOwner expression
// `((topic.hashCode() * 31 & 0x7FFFFFFF) % n + partition) % n`.
var javaHashTable = []struct {
	topic string
	hash  int32
}{
	{"orders", -1008770331},
	{"t", 116},
	{"payments-v2", -1539523300},
	{"", 0},
	{"zażółć", -701064989},
	{"日本語トピック", -304544657},
	{"emoji-😀", 1164511306},
	{"a-very-long-topic-name-with-many-characters-0123456789", 2016328611},
}

var javaOwnerTable = []struct {
	topic     string
	n         int
	partition int32
	owner     int
}{
	{"orders", 2, 0, 1}, {"orders", 2, 5, 0}, {"orders", 3, 0, 0}, {"orders", 3, 5, 2}, {"orders", 7, 0, 3}, {"orders", 7, 5, 1}, {"orders", 16, 0, 11}, {"orders", 16, 5, 0},
	{"t", 2, 0, 0}, {"t", 2, 5, 1}, {"t", 3, 0, 2}, {"t", 3, 5, 1}, {"t", 7, 0, 5}, {"t", 7, 5, 3}, {"t", 16, 0, 12}, {"t", 16, 5, 1},
	{"payments-v2", 2, 0, 0}, {"payments-v2", 2, 5, 1}, {"payments-v2", 3, 0, 0}, {"payments-v2", 3, 5, 2}, {"payments-v2", 7, 0, 4}, {"payments-v2", 7, 5, 2}, {"payments-v2", 16, 0, 4}, {"payments-v2", 16, 5, 9},
	{"", 2, 0, 0}, {"", 2, 5, 1}, {"", 3, 0, 0}, {"", 3, 5, 2}, {"", 7, 0, 0}, {"", 7, 5, 5}, {"", 16, 0, 0}, {"", 16, 5, 5},
	{"zażółć", 2, 0, 1}, {"zażółć", 2, 5, 0}, {"zażółć", 3, 0, 2}, {"zażółć", 3, 5, 1}, {"zażółć", 7, 0, 2}, {"zażółć", 7, 5, 0}, {"zażółć", 16, 0, 13}, {"zażółć", 16, 5, 2},
	{"日本語トピック", 2, 0, 1}, {"日本語トピック", 2, 5, 0}, {"日本語トピック", 3, 0, 2}, {"日本語トピック", 3, 5, 1}, {"日本語トピック", 7, 0, 5}, {"日本語トピック", 7, 5, 3}, {"日本語トピック", 16, 0, 1}, {"日本語トピック", 16, 5, 6},
	{"emoji-😀", 2, 0, 0}, {"emoji-😀", 2, 5, 1}, {"emoji-😀", 3, 0, 2}, {"emoji-😀", 3, 5, 1}, {"emoji-😀", 7, 0, 3}, {"emoji-😀", 7, 5, 1}, {"emoji-😀", 16, 0, 6}, {"emoji-😀", 16, 5, 11},
	{"a-very-long-topic-name-with-many-characters-0123456789", 2, 0, 1}, {"a-very-long-topic-name-with-many-characters-0123456789", 2, 5, 0},
	{"a-very-long-topic-name-with-many-characters-0123456789", 3, 0, 2}, {"a-very-long-topic-name-with-many-characters-0123456789", 3, 5, 1},
	{"a-very-long-topic-name-with-many-characters-0123456789", 7, 0, 0}, {"a-very-long-topic-name-with-many-characters-0123456789", 7, 5, 5},
	{"a-very-long-topic-name-with-many-characters-0123456789", 16, 0, 13}, {"a-very-long-topic-name-with-many-characters-0123456789", 16, 5, 2},
}

func TestOwnerMatchesJava(t *testing.T) {
	t.Parallel()
	for _, tt := range javaHashTable {
		if got := javaStringHash(tt.topic); got != tt.hash {
			t.Errorf("javaStringHash(%q) = %d, Java says %d", tt.topic, got, tt.hash)
		}
	}
	for _, tt := range javaOwnerTable {
		if got := ownerSlot(tt.topic, tt.partition, tt.n); got != tt.owner {
			t.Errorf("ownerSlot(%q, %d, %d) = %d, Flink says %d", tt.topic, tt.partition, tt.n, got, tt.owner)
		}
	}
}

// testSpec is the input's spec, built once: building it parses the lint
// rule, which is slow under the race detector.
var testSpec = sync.OnceValue(Spec)
