package kafkasource_test

import (
	"context"
	"fmt"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	_ "github.com/connectd/connectd/plugins/input/kafkasource"
)

// A pipeline that reads a topic from the start, committing to a consumer
// group, and prints each record with its metadata. The broker is franz-go's
// in-process fake.
func Example() {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	addr := cluster.ListenAddrs()[0]

	producer, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		panic(err)
	}
	defer producer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, item := range []string{"apple", "pear", "fig"} {
		rec := &kgo.Record{Topic: "orders", Key: fmt.Appendf(nil, "order-%d", i), Value: []byte(item),
			Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("shop")}}}
		if err := producer.ProduceSync(ctx, rec).FirstErr(); err != nil {
			panic(err)
		}
	}

	builder := service.NewStreamBuilder()
	if err := builder.AddInputYAML(fmt.Sprintf(`
kafka_source:
  seed_brokers: [ %s ]
  topics: [ orders ]
  consumer_group: example
  start_from: earliest
  commit_period: 1s
`, addr)); err != nil {
		panic(err)
	}
	if err := builder.AddProcessorYAML(`
mapping: |
  root = "%s/%d@%d key=%s source=%s: %s".format(
    @kafka_topic, @kafka_partition, @kafka_offset, @kafka_key, @source, content())
`); err != nil {
		panic(err)
	}
	if err := builder.SetLoggerYAML("level: none"); err != nil {
		panic(err)
	}
	seen := make(chan struct{}, 3)
	if err := builder.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
		b, err := m.AsBytes()
		fmt.Println(string(b))
		seen <- struct{}{}
		return err
	}); err != nil {
		panic(err)
	}
	stream, err := builder.Build()
	if err != nil {
		panic(err)
	}
	go func() { _ = stream.Run(context.Background()) }()
	for range 3 {
		<-seen
	}
	if err := stream.StopWithin(10 * time.Second); err != nil {
		panic(err)
	}

	// Output:
	// orders/0@0 key=order-0 source=shop: apple
	// orders/0@1 key=order-1 source=shop: pear
	// orders/0@2 key=order-2 source=shop: fig
}
