package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// topicSet is topics topics of partitions partitions each, named
// prefix-t000, prefix-t001, ...: a set that a topic_pattern subscribes to.
type topicSet struct {
	prefix             string
	topics, partitions int
	// records is the number of records over all of them.
	records int64
}

func (s topicSet) name(i int) string { return fmt.Sprintf("%s-t%03d", s.prefix, i) }

func (s topicSet) names() []string {
	out := make([]string, s.topics)
	for i := range out {
		out[i] = s.name(i)
	}
	return out
}

// pattern is the topic_pattern matching the set and nothing else.
func (s topicSet) pattern() string { return s.prefix + `-t[0-9]{3}` }

// total is the number of partitions of the set.
func (s topicSet) total() int { return s.topics * s.partitions }

// ensureTopicSet makes sure the set exists with exactly its records, spread
// evenly over its partitions, reusing the one an earlier run left; else it
// deletes what is there and creates and fills it. It returns how long the
// creation and the filling took (0 when reused).
func ensureTopicSet(ctx context.Context, brokers string, s topicSet, size int) (created, filled time.Duration, err error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ProducerLinger(20*time.Millisecond),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(1_000_000), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if ends, err := adm.ListEndOffsets(ctx, s.names()...); err == nil && ends.Error() == nil {
		var n int64
		parts, even := 0, true
		per := s.records / int64(s.total())
		ends.Each(func(o kadm.ListedOffset) {
			n += o.Offset
			parts++
			even = even && (o.Offset == per || o.Offset == per+1)
		})
		if n == s.records && parts == s.total() && even {
			fmt.Fprintf(os.Stderr, "reusing %d topics %s-t*\n", s.topics, s.prefix)
			return 0, 0, nil
		}
	}
	deleteTopicSet(ctx, brokers, s)
	start := time.Now()
	// A KRaft controller refuses a request that creates more than 10,000
	// records at once (POLICY_VIOLATION): a topic and its partitions are
	// records, so the topics go in requests of at most 5,000 partitions.
	names := s.names()
	per := max(1, 5000/s.partitions)
	for i := 0; i < len(names); i += per {
		resp, err := adm.CreateTopics(ctx, int32(s.partitions), 1, nil, names[i:min(i+per, len(names))]...)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return 0, 0, fmt.Errorf("creating %d topics of %d partitions: %w", s.topics, s.partitions, err)
		}
	}
	if err := waitLeaders(ctx, adm, s); err != nil {
		return 0, 0, err
	}
	created = time.Since(start)
	fmt.Fprintf(os.Stderr, "created %d topics of %d partitions in %v; producing %d records of %d bytes\n",
		s.topics, s.partitions, created.Round(time.Millisecond), s.records, size)
	value := make([]byte, size)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	start = time.Now()
	total := int64(s.total())
	err = kafkatest.ProduceN(ctx, cl, s.records, func(i int64) *kgo.Record {
		p := i % total
		return &kgo.Record{Topic: s.name(int(p) / s.partitions), Partition: int32(int(p) % s.partitions), Value: value}
	})
	if err != nil {
		return 0, 0, err
	}
	return created, time.Since(start), nil
}

// waitLeaders waits until every partition of the set has a leader.
func waitLeaders(ctx context.Context, adm *kadm.Client, s topicSet) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		md, err := adm.Metadata(ctx, s.names()...)
		ready := 0
		if err == nil {
			for _, td := range md.Topics {
				for _, p := range td.Partitions {
					if p.Err == nil && p.Leader >= 0 {
						ready++
					}
				}
			}
			if ready == s.total() {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d partitions of %s-t* have a leader after 5m (%v)", ready, s.total(), s.prefix, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deleteTopicSet deletes the topics of the set (those that exist) and waits
// (at most a minute) until the metadata no longer shows any of them.
func deleteTopicSet(ctx context.Context, brokers string, s topicSet) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	_, _ = adm.DeleteTopics(ctx, s.names()...)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		md, err := adm.Metadata(ctx, s.names()...)
		if err != nil {
			continue
		}
		left := 0
		for _, td := range md.Topics {
			if td.Err == nil {
				left++
			}
		}
		if left == 0 {
			return
		}
	}
}

// privateBroker starts a broker of the scenario's own with scripts/kafka.sh
// (ports from portBase, data in dir) and returns its address and how to
// stop it. 10,000 partitions hold 10,000 open files of a broker (one log
// segment each) and 1 GB of its memory: on the broker other tests share,
// they crowd its open-file limit (20,000 here), and deleting one set while
// another is created overran it and stopped the broker.
func privateBroker(ctx context.Context, portBase int, dir string) (string, func(), error) {
	env := append(os.Environ(), fmt.Sprintf("CONNECTD_KAFKA_PORT_BASE=%d", portBase), "CONNECTD_KAFKA_DATA="+dir,
		"CONNECTD_KAFKA_HEAP=-Xms512m -Xmx1g")
	run := func(arg string) error {
		cmd := exec.CommandContext(ctx, "scripts/kafka.sh", arg)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, io.Discard, os.Stderr
		return cmd.Run()
	}
	if err := run("up"); err != nil {
		return "", nil, fmt.Errorf("starting a private broker (scripts/kafka.sh up, CONNECTD_KAFKA_PORT_BASE=%d): %w", portBase, err)
	}
	return fmt.Sprintf("127.0.0.1:%d", portBase), func() { _ = run("down") }, nil
}
