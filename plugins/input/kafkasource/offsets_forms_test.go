package kafkasource

import (
	"maps"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Every documented form of start_offsets and stop_offsets is accepted, by
// `connectd lint` (the component's lint rule) and by the constructor alike:
// per topic a map whose partition keys are quoted or not, or Flink's string;
// `topic:partition` keys; partition keys alone with a single topic.
func TestOffsetsForms(t *testing.T) {
	t.Parallel()
	const head = "seed_brokers: [ b:9092 ]\nconsumer_group: g\nstart_from: offsets\n"
	for _, tc := range []struct {
		name, yaml string
		want       map[topicPartition]int64
	}{
		{"quoted partition keys", `topics: [ t ]` + "\n" + `start_offsets: { t: { "0": 95, "1": 7 } }`, map[topicPartition]int64{{"t", 0}: 95, {"t", 1}: 7}},
		{"bare partition keys", "topics: [ t ]\nstart_offsets: { t: { 0: 95 } }", map[topicPartition]int64{{"t", 0}: 95}},
		{"Flink string", `topics: [ t ]` + "\n" + `start_offsets: { t: "partition:0,offset:95" }`, map[topicPartition]int64{{"t", 0}: 95}},
		{"topic:partition keys", `topics: [ t, u ]` + "\n" + `start_offsets: { "t:0": 95, "u:3": 1 }`, map[topicPartition]int64{{"t", 0}: 95, {"u", 3}: 1}},
		{"partition keys with one topic", `topics: [ t ]` + "\n" + `start_offsets: { "0": 95, "2": 4 }`, map[topicPartition]int64{{"t", 0}: 95, {"t", 2}: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := parseConfig(t, head+tc.yaml)
			if err != nil {
				t.Fatalf("constructor: %v", err)
			}
			if !maps.Equal(c.StartOffsets, tc.want) {
				t.Errorf("start offsets %v, want %v", c.StartOffsets, tc.want)
			}
			lints, err := service.GlobalEnvironment().NewComponentConfigLinter().LintInputYAML([]byte("kafka_source:\n" + indentYAML(head+tc.yaml)))
			if err != nil {
				t.Fatal(err)
			}
			if len(lints) > 0 {
				t.Errorf("lints %v", lints)
			}
		})
	}
	_, err := parseConfig(t, head+`topics: [ t, u ]`+"\n"+`start_offsets: { "0": 95 }`)
	if err == nil || !strings.Contains(err.Error(), `field start_offsets.0: a partition without a topic needs exactly one topic in topics; write "<topic>:0"`) {
		t.Errorf("a partition alone with two topics: %v", err)
	}
}

func indentYAML(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
