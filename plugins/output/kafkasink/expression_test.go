package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestPartitionExpression(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		expr    string
		key     []byte // nil: null key
		value   string
		meta    map[string]string
		n       int
		want    int
		wantErr string // a PartitionError containing this
	}{
		{name: "metadata modulo", expr: `int(metadata["tenant"]) % num_partitions`, meta: map[string]string{"tenant": "17"}, n: 5, want: 2},
		{name: "key size", expr: `size(key) % num_partitions`, key: []byte("abcdefg"), n: 4, want: 3},
		{name: "null key is empty bytes", expr: `size(key) == 0 ? num_partitions - 1 : 0`, n: 6, want: 5},
		{name: "value", expr: `string(value) == "vip" ? 0 : 1`, value: "vip", n: 2, want: 0},
		{name: "topic", expr: `topic == "orders" ? 1 : 0`, n: 2, want: 1},
		{name: "dyn int", expr: `metadata.exists(k, k == "p") ? int(metadata["p"]) : 0`, meta: map[string]string{"p": "1"}, n: 3, want: 1},
		{name: "out of range", expr: `num_partitions`, n: 3,
			wantErr: `field partition_expression: partition 3 is out of range for topic "orders", which has 3 partitions (want 0 to 2)`},
		{name: "negative", expr: `-4`, n: 3, wantErr: "partition -4 is out of range"},
		{name: "huge", expr: `9223372036854775807`, n: 3, wantErr: "partition 9223372036854775807 is out of range"},
		{name: "missing metadata", expr: `int(metadata["absent"])`, n: 3, wantErr: `field partition_expression: topic "orders": no such key: absent`},
		{name: "not a number", expr: `int(metadata["tenant"])`, meta: map[string]string{"tenant": "acme"}, n: 3, wantErr: "field partition_expression"},
		{name: "division by zero", expr: `1 / (num_partitions - 3)`, n: 3, wantErr: "division by zero"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Config{Partitioner: PartitionerExpression, PartitionExpression: tc.expr}.kgoPartitioner()
			if err != nil {
				t.Fatal(err)
			}
			ctx, pc := withPartitionCheck(context.Background(), &partitionCheck{meta: tc.meta})
			r := &kgo.Record{Topic: "orders", Key: tc.key, Value: []byte(tc.value), Context: ctx}
			tp := p.ForTopic("orders")
			if !tp.RequiresConsistency(r) {
				t.Fatal("an expression must pin its record")
			}
			got := tp.Partition(r, tc.n)
			pe := pc.err.Load()
			if tc.wantErr == "" {
				if got != tc.want || pe != nil {
					t.Fatalf("partition %d, error %v; want %d", got, pe, tc.want)
				}
				return
			}
			if got >= 0 && got < tc.n {
				t.Errorf("the client was handed valid partition %d", got)
			}
			if pe == nil || !strings.Contains(pe.Error(), tc.wantErr) {
				t.Errorf("error %v, want %q", pe, tc.wantErr)
			}
		})
	}
}

// Syntax and type errors are reported when the config is read, naming the
// field.
func TestPartitionExpressionCompileErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ expr, want string }{
		{`1 +`, "Syntax error"},
		{`"three"`, "must return an int (the partition), returns string"},
		{`partitions % 2`, "undeclared reference to 'partitions'"},
		{`key + 1`, "no matching overload"},
	} {
		_, err := parseConfig(t, fmt.Sprintf("seed_brokers: [ \"localhost:9092\" ]\ntopic: t\npartitioner: expression\npartition_expression: %q\n", tc.expr))
		if err == nil || !strings.Contains(err.Error(), "field partition_expression") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want field partition_expression and %q", tc.expr, err, tc.want)
		}
	}
}

// connectd lint reports CEL errors (through the lint rule's Bloblang method).
func TestPartitionExpressionLint(t *testing.T) {
	t.Parallel()
	linter := service.GlobalEnvironment().FullConfigSchema("", "").NewStreamConfigLinter()
	for _, tc := range []struct{ extra, want string }{
		{"partitioner: expression\n    partition_expression: 'size(key) % num_partitions'", ""},
		{"partitioner: expression\n    partition_expression: '1 +'", "field partition_expression: ERROR"},
		{"partitioner: expression\n    partition_expression: '\"a\"'", "must return an int"},
		{"partitioner: expression", "field partition_expression: required with partitioner expression"},
		{"partition_expression: '0'", "field partition_expression: only used with partitioner expression, but partitioner is default"},
	} {
		lints, err := linter.LintYAML([]byte("input:\n  generate:\n    mapping: root = {}\noutput:\n  kafka_sink:\n    seed_brokers: [ localhost:9092 ]\n    topic: t\n    " + tc.extra + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range lints {
			got = append(got, l.What)
		}
		all := strings.Join(got, "\n")
		if tc.want == "" && all != "" || !strings.Contains(all, tc.want) {
			t.Errorf("%s: lints %q, want %q", tc.extra, all, tc.want)
		}
	}
}

// With exactly_once, a message whose expression gives no valid partition
// fails alone; the rest commits.
func TestExactlyOnceExpressionOutOfRangeFailsAlone(t *testing.T) {
	t.Parallel()
	_, addr := newCluster(t, kfake.SeedTopics(4, "events"))
	s := newConnectedSink(t, eosYAML(addr, "partitioner: expression\npartition_expression: 'int(metadata[\"p\"])'"))
	batch := service.MessageBatch{message("p3", "p", "3"), message("p4", "p", "4"), message("p0", "p", "0"), message("bad", "p", "x")}
	failed := failedIndices(t, s.WriteBatch(context.Background(), batch))
	if len(failed) != 2 || failed[1] == nil || failed[3] == nil {
		t.Fatalf("want messages 1 and 3 failed, got %v", failed)
	}
	var pe *PartitionError
	if !errors.As(failed[1], &pe) || pe.Partition != 4 || !strings.Contains(failed[1].Error(), "partition 4 is out of range") {
		t.Errorf("message 1: %v", failed[1])
	}
	got := readCommitted(t, addr, 2, "events")
	g := slices.Clone(got["events"])
	slices.Sort(g)
	if !slices.Equal(g, []string{"p0", "p3"}) {
		t.Fatalf("read_committed sees %v, want [p0 p3]", g)
	}
}
