package graph

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/studio/catalog"
	"github.com/connectd/connectd/internal/studio/yamlsrc"
	_ "github.com/connectd/connectd/plugins/bundle"
)

// edge is an edge as the tests write it: "from -> to" with kind and label.
type edge struct{ from, to, kind, label string }

func edgesOf(g *Graph) []edge {
	out := make([]edge, len(g.Edges))
	for i, e := range g.Edges {
		out[i] = edge{e.From, e.To, e.Kind, e.Label}
	}
	return out
}

func idsOf(g *Graph) []string {
	out := make([]string, len(g.Nodes))
	for i, n := range g.Nodes {
		out[i] = n.ID
	}
	return out
}

func TestGraphShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		yaml  string
		nodes []string
		edges []edge
		errs  []string
	}{
		{
			name: "input broker, buffer, processor switch, output switch",
			yaml: `input:
  broker:
    inputs:
      - generate: { mapping: 'root = {}' }
      - kafka_source: { seed_brokers: [ b:9092 ], topics: [ q ] }
buffer:
  memory: {}
pipeline:
  processors:
    - switch:
        - check: '@kafka_topic != null'
          processors:
            - mapping: 'root = content()'
            - log: { message: x }
    - bloblang: 'root = this'
output:
  switch:
    cases:
      - check: '@kafka_topic == null'
        output:
          kafka_sink: { seed_brokers: [ b:9092 ], topic: q }
      - output:
          stdout: {}
`,
			nodes: []string{
				"input", "input.broker.inputs.0", "input.broker.inputs.1", "buffer",
				"pipeline.processors.0", "pipeline.processors.0.switch.0.processors.0", "pipeline.processors.0.switch.0.processors.1",
				"pipeline.processors.1", "output", "output.switch.cases.0.output", "output.switch.cases.1.output",
			},
			edges: []edge{
				{"input.broker.inputs.0", "input", EdgeFlow, ""},
				{"input.broker.inputs.1", "input", EdgeFlow, ""},
				{"input", "buffer", EdgeFlow, ""},
				{"buffer", "pipeline.processors.0", EdgeFlow, ""},
				{"pipeline.processors.0", "pipeline.processors.0.switch.0.processors.0", EdgeFlow, "@kafka_topic != null"},
				{"pipeline.processors.0.switch.0.processors.0", "pipeline.processors.0.switch.0.processors.1", EdgeFlow, ""},
				{"pipeline.processors.0", "pipeline.processors.1", EdgeFlow, ""},
				{"pipeline.processors.0.switch.0.processors.1", "pipeline.processors.1", EdgeFlow, ""},
				{"output", "output.switch.cases.0.output", EdgeFlow, "@kafka_topic == null"},
				{"output", "output.switch.cases.1.output", EdgeFlow, "otherwise"},
				{"pipeline.processors.1", "output", EdgeFlow, ""},
			},
		},
		{
			name: "fan_out broker, fallback and output processors",
			yaml: `input:
  stdin: {}
  processors:
    - mapping: 'root = this'
output:
  broker:
    pattern: fan_out
    outputs:
      - fallback:
          - http_client: { url: 'http://x' }
          - file: { path: /tmp/x }
      - drop: {}
  processors:
    - try:
        - mapping: 'root = this'
`,
			nodes: []string{
				"input", "input.processors.0", "output",
				"output.broker.outputs.0", "output.broker.outputs.0.fallback.0", "output.broker.outputs.0.fallback.1",
				"output.broker.outputs.1", "output.processors.0", "output.processors.0.try.0",
			},
			edges: []edge{
				{"input", "input.processors.0", EdgeFlow, ""},
				{"output.broker.outputs.0", "output.broker.outputs.0.fallback.0", EdgeFlow, "primary"},
				{"output.broker.outputs.0", "output.broker.outputs.0.fallback.1", EdgeFlow, "fallback 1"},
				{"output", "output.broker.outputs.0", EdgeFlow, "fan_out"},
				{"output", "output.broker.outputs.1", EdgeFlow, "fan_out"},
				{"output.processors.0", "output.processors.0.try.0", EdgeFlow, ""},
				{"output.processors.0.try.0", "output", EdgeFlow, ""},
				{"input.processors.0", "output.processors.0", EdgeFlow, ""},
			},
		},
		{
			name: "resources and sequence",
			yaml: `input:
  sequence:
    inputs:
      - resource: first
      - stdin: {}
pipeline:
  processors:
    - resource: clean
    - resource: missing
output:
  resource: dlq
input_resources:
  - label: first
    file: { paths: [ a.txt ] }
processor_resources:
  - label: clean
    mapping: 'root = this'
output_resources:
  - label: dlq
    drop: {}
`,
			nodes: []string{
				"input_resources.0", "processor_resources.0", "output_resources.0",
				"input", "input.sequence.inputs.0", "input.sequence.inputs.1",
				"pipeline.processors.0", "pipeline.processors.1", "output",
			},
			edges: []edge{
				{"input.sequence.inputs.0", "input", EdgeFlow, ""},
				{"input.sequence.inputs.1", "input", EdgeFlow, ""},
				{"input", "pipeline.processors.0", EdgeFlow, ""},
				{"pipeline.processors.0", "pipeline.processors.1", EdgeFlow, ""},
				{"pipeline.processors.1", "output", EdgeFlow, ""},
				{"input.sequence.inputs.0", "input_resources.0", EdgeResource, "first"},
				{"pipeline.processors.0", "processor_resources.0", EdgeResource, "clean"},
				{"output", "output_resources.0", EdgeResource, "dlq"},
			},
			errs: []string{`9:17 resource "missing": no processor resource has this label`},
		},
		{
			name: "a broken line being typed keeps the rest of the file",
			yaml: `input:
  kafka_source:
    topics: [ a
    consumer_group: g
pipeline:
  processors:
    - mapping: 'root = this'
output:
  drop: {}
`,
			nodes: []string{"input", "pipeline.processors.0", "output"},
			edges: []edge{
				{"input", "pipeline.processors.0", EdgeFlow, ""},
				{"pipeline.processors.0", "output", EdgeFlow, ""},
			},
			// yaml.v3 names line 2, where the block of the broken line starts.
			errs: []string{"2:1 did not find expected ',' or ']'"},
		},
		{
			name: "a broken block keeps what comes before it",
			yaml: `input:
  stdin: {}
pipeline:
  processors:
    - mapping: 'root = this'
output:
  switch: [
    cases:
      - output: { drop: {} }
`,
			nodes: []string{"input", "pipeline.processors.0"},
			edges: []edge{{"input", "pipeline.processors.0", EdgeFlow, ""}},
			errs:  []string{"8:1 did not find expected node content"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := Build([]byte(c.yaml), catalog.Env{})
			if got := idsOf(g); !slices.Equal(got, c.nodes) {
				t.Errorf("nodes:\n got %q\nwant %q", got, c.nodes)
			}
			got := edgesOf(g)
			for _, e := range c.edges {
				if !slices.Contains(got, e) {
					t.Errorf("missing edge %+v", e)
				}
			}
			if len(got) != len(c.edges) {
				t.Errorf("edges:\n got %+v\nwant %+v", got, c.edges)
			}
			var errs []string
			for _, p := range g.Errors {
				errs = append(errs, fmt.Sprintf("%d:%d %s", p.Line, p.Col, p.Message))
			}
			if len(errs) != len(c.errs) {
				t.Fatalf("errors %q, want %q", errs, c.errs)
			}
			for i := range errs {
				if !strings.HasPrefix(errs[i], c.errs[i]) {
					t.Errorf("error %q, want prefix %q", errs[i], c.errs[i])
				}
			}
		})
	}
}

func TestNodeRanges(t *testing.T) {
	t.Parallel()
	src := `input:
  label: in
  kafka_source:
    topics: [ a, b ]   # comment
    consumer_group: g
pipeline:
  processors:
    - mapping: |
        root = this
        root.x = 1

    - log: { message: "hi" }
output:
  drop: {}
`
	g := Build([]byte(src), catalog.Env{})
	want := map[string]yamlsrc.Range{
		"input":                 {Start: yamlsrc.Pos{Line: 3, Col: 3}, End: yamlsrc.Pos{Line: 5, Col: 21}},
		"pipeline.processors.0": {Start: yamlsrc.Pos{Line: 8, Col: 7}, End: yamlsrc.Pos{Line: 10, Col: 18}},
		"pipeline.processors.1": {Start: yamlsrc.Pos{Line: 12, Col: 7}, End: yamlsrc.Pos{Line: 12, Col: 28}},
		"output":                {Start: yamlsrc.Pos{Line: 14, Col: 3}, End: yamlsrc.Pos{Line: 14, Col: 10}},
	}
	for id, r := range want {
		n := g.Node(id)
		if n == nil {
			t.Fatalf("no node %s", id)
		}
		if n.Range != r {
			t.Errorf("%s: range %+v, want %+v", id, n.Range, r)
		}
	}
	if n := g.Node("input"); n.Label != `kafka_source "in"` {
		t.Errorf("label %q", n.Label)
	}
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
	g := Build([]byte(src), catalog.Env{LookupEnv: os.LookupEnv})
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
	if k := g.Node("output.broker.outputs.2").Kafka; k.DeliveryGuarantee != DeliveryAtLeastOnce || k.Topic != "plain" {
		t.Fatalf("plain sink: %+v", k)
	}
	if k := g.Node("output.broker.outputs.3").Kafka; k.DeliveryGuarantee != DeliveryExactlyOnce || k.Topic != "sunk" {
		t.Fatalf("table sink: %+v", k)
	}
	var eos []edge
	for _, e := range edgesOf(g) {
		if e.kind == EdgeExactlyOnce {
			eos = append(eos, edge{e.from, e.to, e.kind, ""})
		}
	}
	// Sources with a group (the first, and the table's) pair with the
	// exactly-once sinks on their cluster (the first and the table's);
	// not the sink on another cluster, the at-least-once one, nor the
	// source without a group.
	want := []edge{
		{"input.broker.inputs.0", "output.broker.outputs.0", EdgeExactlyOnce, ""},
		{"input.broker.inputs.0", "output.broker.outputs.3", EdgeExactlyOnce, ""},
		{"input.broker.inputs.2", "output.broker.outputs.0", EdgeExactlyOnce, ""},
		{"input.broker.inputs.2", "output.broker.outputs.3", EdgeExactlyOnce, ""},
	}
	if !slices.Equal(eos, want) {
		t.Fatalf("exactly_once edges:\n got %+v\nwant %+v", eos, want)
	}
}

func TestTableErrorOnNode(t *testing.T) {
	t.Parallel()
	src := "pipeline:\n  processors:\n    - table_decode:\n        ddl: CREATE TABLE t (id INTEGR)\n"
	g := Build([]byte(src), catalog.Env{})
	k := g.Node("pipeline.processors.0").Kafka
	if k == nil || k.Table != nil || !strings.Contains(k.TableError, "INTEGR") || k.OnError != "fail" {
		t.Fatalf("kafka: %+v", k)
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(Handler(Options{}))
	defer srv.Close()
	body, _ := json.Marshal(Request{YAML: "input:\n  stdin: {}\noutput:\n  drop: {}\n"})
	resp, err := http.Post(srv.URL+"/api/graph", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var g Graph
	if err := json.NewDecoder(resp.Body).Decode(&g); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	if len(g.Nodes) != 2 || len(g.Edges) != 1 || g.Edges[0] != (Edge{From: "input", To: "output", Kind: EdgeFlow}) {
		t.Fatalf("graph: %+v", g)
	}
}
