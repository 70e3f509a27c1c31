package studio

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/studio/catalog"
	"github.com/connectd/connectd/internal/studio/graph"
	_ "github.com/connectd/connectd/plugins/bundle"
)

// The graph's Kafka details come from the components' specs (defaults),
// so these tests need the bundle, which nothing under internal/ may import.

// edge is an edge as the tests write it: "from -> to" with kind and label.
type edge struct{ from, to, kind, label string }

func edgesOf(g *graph.Graph) []edge {
	out := make([]edge, len(g.Edges))
	for i, e := range g.Edges {
		out[i] = edge{e.From, e.To, e.Kind, e.Label}
	}
	return out
}

func TestKafkaDetailsAndExactlyOnce(t *testing.T) {
	t.Parallel()
	src := `input:
  broker:
    inputs:
      - kafka_source:
          seed_brokers: [ "${GRAPH_TEST_BROKERS:127.0.0.1:19092}" ]
          topics: [ orders ]
          consumer_group: ${GRAPH_TEST_GROUP:copy}
          watermark: { max_out_of_orderness: 5s, idle_timeout: 30s }
      - kafka_source:
          seed_brokers: [ 127.0.0.1:19092 ]
          topic_pattern: 'logs-.*'
          assignment: group
      - kafka_source:
          ddl: |
            CREATE TABLE clicks (
              id BIGINT,
              ts TIMESTAMP(3),
              WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
            ) WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'json',
                    'properties.bootstrap.servers' = '127.0.0.1:19092',
                    'properties.group.id' = 'clickers', 'scan.startup.mode' = 'earliest-offset')
output:
  broker:
    outputs:
      - kafka_sink:
          seed_brokers: [ "127.0.0.1:19092" ]
          topic: copy
          delivery_guarantee: exactly_once
      - kafka_sink:
          seed_brokers: [ "other:9092" ]
          topic: elsewhere
          delivery_guarantee: exactly_once
      - kafka_sink:
          seed_brokers: [ "127.0.0.1:19092" ]
          topic: plain
      - kafka_sink:
          ddl: |
            CREATE TABLE sunk (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'sunk', 'format' = 'json',
              'properties.bootstrap.servers' = '127.0.0.1:19092', 'sink.delivery-guarantee' = 'exactly-once',
              'sink.transactional-id-prefix' = 'sunk')
`
	g := graph.Build([]byte(src), catalog.Env{LookupEnv: os.LookupEnv})
	if len(g.Errors) != 0 {
		t.Fatalf("errors: %+v", g.Errors)
	}
	src0 := g.Node("input.broker.inputs.0").Kafka
	if src0 == nil || !slices.Equal(src0.Topics, []string{"orders"}) || src0.ConsumerGroup != "copy" ||
		src0.Assignment != "enumerator" || !slices.Equal(src0.SeedBrokers, []string{"127.0.0.1:19092"}) ||
		src0.Watermark["idle_timeout"] != "30s" || src0.StartFrom != "committed" || src0.StopAt != "none" {
		t.Fatalf("first source: %+v", src0)
	}
	if src1 := g.Node("input.broker.inputs.1").Kafka; src1.TopicPattern != "logs-.*" || src1.Assignment != "group" || src1.ConsumerGroup != "" {
		t.Fatalf("second source: %+v", src1)
	}
	src2 := g.Node("input.broker.inputs.2").Kafka
	if src2.Table == nil || src2.Table.Name != "clicks" || src2.Table.Watermark == nil || src2.Table.Watermark.DelayMs != 2000 ||
		!slices.Equal(src2.Topics, []string{"clicks"}) || src2.ConsumerGroup != "clickers" || src2.StartFrom != "earliest" {
		t.Fatalf("table source: %+v", src2)
	}
	if k := g.Node("output.broker.outputs.2").Kafka; k.DeliveryGuarantee != graph.DeliveryAtLeastOnce || k.Topic != "plain" {
		t.Fatalf("plain sink: %+v", k)
	}
	if k := g.Node("output.broker.outputs.3").Kafka; k.DeliveryGuarantee != graph.DeliveryExactlyOnce || k.Topic != "sunk" {
		t.Fatalf("table sink: %+v", k)
	}
	var eos []edge
	for _, e := range edgesOf(g) {
		if e.kind == graph.EdgeExactlyOnce {
			eos = append(eos, edge{e.from, e.to, e.kind, ""})
		}
	}
	// Sources with a group (the first, and the table's) pair with the
	// exactly-once sinks on their cluster (the first and the table's);
	// not the sink on another cluster, the at-least-once one, nor the
	// source without a group.
	want := []edge{
		{"input.broker.inputs.0", "output.broker.outputs.0", graph.EdgeExactlyOnce, ""},
		{"input.broker.inputs.0", "output.broker.outputs.3", graph.EdgeExactlyOnce, ""},
		{"input.broker.inputs.2", "output.broker.outputs.0", graph.EdgeExactlyOnce, ""},
		{"input.broker.inputs.2", "output.broker.outputs.3", graph.EdgeExactlyOnce, ""},
	}
	if !slices.Equal(eos, want) {
		t.Fatalf("exactly_once edges:\n got %+v\nwant %+v", eos, want)
	}
}

func TestTableErrorOnNode(t *testing.T) {
	t.Parallel()
	src := "pipeline:\n  processors:\n    - table_decode:\n        ddl: CREATE TABLE t (id INTEGR)\n"
	g := graph.Build([]byte(src), catalog.Env{})
	k := g.Node("pipeline.processors.0").Kafka
	if k == nil || k.Table != nil || !strings.Contains(k.TableError, "INTEGR") || k.OnError != "fail" {
		t.Fatalf("kafka: %+v", k)
	}
}
