package kafkasink_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	_ "github.com/connectd/connectd/plugins/output/kafkasink"
)

// A pipeline writes keyed messages with kafka_sink; each key lands on the
// partition the Java client would choose (murmur2 over 3 partitions).
func Example() {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "users"))
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	broker := cluster.ListenAddrs()[0]

	builder := service.NewStreamBuilder()
	err = builder.SetYAML(fmt.Sprintf(`
input:
  generate:
    count: 3
    interval: ""
    mapping: |
      root.user = ["alice", "bob", "carol"].index(count("example") - 1)
      meta origin = "example"
output:
  kafka_sink:
    seed_brokers: [ %q ]
    topic: users
    key: ${! json("user") }
    metadata:
      include_prefixes: [ origin ]
logger:
  level: off
`, broker))
	if err != nil {
		panic(err)
	}
	stream, err := builder.Build()
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := stream.Run(ctx); err != nil {
		panic(err)
	}

	consumer, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics("users"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		panic(err)
	}
	defer consumer.Close()
	var lines []string
	for len(lines) < 3 {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			panic("records did not arrive in time")
		}
		fetches.EachRecord(func(r *kgo.Record) {
			lines = append(lines, fmt.Sprintf("partition %d key %s header %s=%s value %s",
				r.Partition, r.Key, r.Headers[0].Key, r.Headers[0].Value, r.Value))
		})
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// partition 0 key alice header origin=example value {"user":"alice"}
	// partition 0 key bob header origin=example value {"user":"bob"}
	// partition 2 key carol header origin=example value {"user":"carol"}
}

// With delivery_guarantee exactly_once, each batch (here two messages) is
// one Kafka transaction; a read_committed consumer sees only committed
// transactions, and every record carries the transactional flag.
func Example_exactlyOnce() {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "payments"))
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	broker := cluster.ListenAddrs()[0]

	builder := service.NewStreamBuilder()
	err = builder.SetYAML(fmt.Sprintf(`
input:
  generate:
    count: 4
    interval: ""
    mapping: root.payment = count("example_eos")
output:
  kafka_sink:
    seed_brokers: [ %q ]
    topic: payments
    delivery_guarantee: exactly_once
    transactional_id_prefix: payments-writer
    batching:
      count: 2
logger:
  level: off
`, broker))
	if err != nil {
		panic(err)
	}
	stream, err := builder.Build()
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := stream.Run(ctx); err != nil {
		panic(err)
	}

	consumer, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics("payments"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		panic(err)
	}
	defer consumer.Close()
	var lines []string
	for len(lines) < 4 {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			panic("records did not arrive in time")
		}
		fetches.EachRecord(func(r *kgo.Record) {
			lines = append(lines, fmt.Sprintf("%s transactional=%v", r.Value, r.Attrs.IsTransactional()))
		})
	}
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// {"payment":1} transactional=true
	// {"payment":2} transactional=true
	// {"payment":3} transactional=true
	// {"payment":4} transactional=true
}
