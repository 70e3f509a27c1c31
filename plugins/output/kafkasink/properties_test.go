package kafkasink

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/schema"
)

// sinkPropsDDL is a kafka table with extra WITH options, as the ddl field.
func sinkPropsDDL(extra ...string) string {
	ddl := fmt.Sprintf(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw',
  'properties.bootstrap.servers' = 'h:1'%s)`, strings.Join(append([]string{""}, extra...), ",\n  "))
	return "ddl: |\n  " + strings.ReplaceAll(ddl, "\n", "\n  ") + "\n"
}

// producerClient builds a franz-go client with the producer options of c.
func producerClient(t *testing.T, c Config) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append(c.Conn.Opts(), c.producerOpts(kgo.StickyKeyPartitioner(nil))...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// The producer's Kafka client properties of a table set the kafka_sink
// fields with the same meaning, and reach the franz-go client.
func TestTableProducerProperties(t *testing.T) {
	t.Parallel()
	c, err := parseConfig(t, sinkPropsDDL(
		"'sink.delivery-guarantee' = 'exactly-once'",
		"'sink.transactional-id-prefix' = 'job'",
		"'properties.transaction.timeout.ms' = '120000'",
		"'properties.compression.type' = 'ZSTD'",
		"'properties.max.request.size' = '2097152'",
		"'properties.delivery.timeout.ms' = '30000'",
		"'properties.acks' = '-1'",
		"'properties.enable.idempotence' = 'true'",
		"'properties.allow.auto.create.topics' = 'false'",
	))
	if err != nil {
		t.Fatal(err)
	}
	if c.TransactionTimeout != 2*time.Minute || c.Compression != CompressionZstd || c.MaxMessageBytes != 2<<20 ||
		c.Timeout != 30*time.Second || c.Acks != AcksAll || c.AllowAutoTopicCreation {
		t.Fatalf("derived config: %+v", c)
	}
	cl := producerClient(t, c)
	if got := cl.OptValue(kgo.TransactionTimeout); got != 2*time.Minute {
		t.Errorf("transaction timeout %v", got)
	}
	if got := cl.OptValue(kgo.ProducerBatchMaxBytes); got != int32(2<<20) {
		t.Errorf("batch max bytes %v", got)
	}
	if got := fmt.Sprint(cl.OptValue(kgo.ProducerBatchCompression)); !strings.Contains(got, fmt.Sprint(kgo.ZstdCompression())) {
		t.Errorf("compression %v", got)
	}

	// Without idempotence ('none'), acks is the table's.
	for _, tc := range []struct {
		acks string
		want kgo.Acks
	}{{"0", kgo.NoAck()}, {"1", kgo.LeaderAck()}, {"all", kgo.AllISRAcks()}} {
		c, err := parseConfig(t, sinkPropsDDL("'sink.delivery-guarantee' = 'none'", "'properties.enable.idempotence' = 'false'",
			fmt.Sprintf("'properties.acks' = '%s'", tc.acks)))
		if err != nil {
			t.Fatal(err)
		}
		if got := producerClient(t, c).OptValue(kgo.RequiredAcks); got != tc.want {
			t.Errorf("acks %s: client acks %v, want %v", tc.acks, got, tc.want)
		}
	}

	// linger.ms and batch.size are the batching policy in front of the
	// producer; linger.ms 0 writes each message as it comes.
	c, err = parseConfig(t, sinkPropsDDL("'properties.linger.ms' = '20'", "'properties.batch.size' = '65536'"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Batching.Period != "20ms" || c.Batching.ByteSize != 65536 {
		t.Errorf("batching %+v", c.Batching)
	}
	c, err = parseConfig(t, sinkPropsDDL("'properties.linger.ms' = '0'"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Batching.Count != 1 || c.Batching.Period != "" || c.Batching.ByteSize != 0 {
		t.Errorf("linger 0: batching %+v", c.Batching)
	}
}

// A property that contradicts a written field or the delivery guarantee is
// an error naming both, at parse and lint time.
func TestTableProducerPropertyErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"compression contradicts", sinkPropsDDL("'properties.compression.type' = 'gzip'") + "compression: lz4\n",
			[]string{`field compression: "lz4" contradicts option 'properties.compression.type' = 'gzip' of table t`}},
		{"transaction timeout contradicts", sinkPropsDDL("'properties.transaction.timeout.ms' = '60000'") + "transaction_timeout: 2m\n",
			[]string{`field transaction_timeout: "2m" contradicts option 'properties.transaction.timeout.ms' = '60000' of table t`}},
		{"acks 1 with at-least-once", sinkPropsDDL("'properties.acks' = '1'"),
			[]string{"option 'properties.acks' = '1' contradicts delivery guarantee at_least_once (the default delivery_guarantee), which needs acks = all"}},
		{"idempotence off with at-least-once", sinkPropsDDL("'sink.delivery-guarantee' = 'at-least-once'", "'properties.enable.idempotence' = 'false'"),
			[]string{"option 'properties.enable.idempotence' = 'false' contradicts delivery guarantee at_least_once (option 'sink.delivery-guarantee')"}},
		{"idempotence on with none", sinkPropsDDL("'properties.enable.idempotence' = 'true'") + "delivery_guarantee: none\n",
			[]string{"option 'properties.enable.idempotence' = 'true' contradicts delivery guarantee none (field delivery_guarantee)"}},
		{"linger with exactly-once", sinkPropsDDL("'sink.delivery-guarantee' = 'exactly-once'", "'sink.transactional-id-prefix' = 'p'", "'properties.linger.ms' = '5'"),
			[]string{"option 'properties.linger.ms' is not used with delivery guarantee exactly_once", "field commit_interval"}},
		{"linger contradicts batching", sinkPropsDDL("'properties.linger.ms' = '5'") + "batching: { period: 1s }\n",
			[]string{"field batching:", "contradicts option 'properties.linger.ms' = '5' of table t"}},
		{"auto creation contradicts", sinkPropsDDL("'properties.allow.auto.create.topics' = 'true'") + "allow_auto_topic_creation: false\n",
			[]string{"field allow_auto_topic_creation: false contradicts option 'properties.allow.auto.create.topics' = 'true' of table t"}},
		{"partitioner class", sinkPropsDDL("'properties.partitioner.class' = 'com.example.P'"),
			[]string{"option 'properties.partitioner.class' is not supported by connectd: a Java class, which connectd cannot load; use option 'sink.partitioner'"}},
		{"serializer", sinkPropsDDL("'properties.value.serializer' = 'org.apache.kafka.common.serialization.StringSerializer'"),
			[]string{"option 'properties.value.serializer' is not supported by connectd: a Java class; connectd encodes values with 'format'"}},
		{"transactional id", sinkPropsDDL("'properties.transactional.id' = 'x'"),
			[]string{"option 'properties.transactional.id' is not supported by connectd: set option 'sink.transactional-id-prefix'"}},
		{"bad acks", sinkPropsDDL("'properties.acks' = '2'"),
			[]string{"option 'properties.acks' = '2': want one of 'all', '-1', '0', '1'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig(t, tc.yaml)
			lintErr := service.NewStreamBuilder().SetYAML("input:\n  generate: { mapping: 'root = \"\"' }\noutput:\n  kafka_sink:\n    " +
				strings.ReplaceAll(strings.TrimSpace(tc.yaml), "\n", "\n    ") + "\n")
			for _, w := range tc.want {
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

// Every producer property schema accepts is applied by the sink: none is
// accepted and ignored.
func TestEveryProducerPropertyApplied(t *testing.T) {
	t.Parallel()
	for _, name := range schema.ClientPropertyNames(schema.SideSink) {
		if _, ok := tableProperties[name]; !ok && !slices.Contains(tablePropertiesElsewhere, name) {
			t.Errorf("producer property %s is accepted by schema but not applied by kafka_sink", name)
		}
	}
}
