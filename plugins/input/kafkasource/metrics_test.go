package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/metricdoc"
	"github.com/connectd/connectd/internal/metricdoc/metrictest"
)

// recordedStream runs a stream of the kafka_source in inputYAML into a
// drop output, with its metrics recorded, until the end of the test.
func recordedStream(t *testing.T, inputYAML string) *metrictest.Recorder {
	t.Helper()
	return recordedPipeline(t, "input:\n  kafka_source:\n    "+strings.ReplaceAll(strings.TrimSpace(inputYAML), "\n", "\n    ")+
		"\noutput:\n  drop: {}\n")
}

// recordedPipeline runs a stream of the config pipelineYAML (input,
// buffer, pipeline, output), with its metrics recorded, until the end of
// the test.
func recordedPipeline(t *testing.T, pipelineYAML string) *metrictest.Recorder {
	t.Helper()
	rec := metrictest.New()
	env := service.NewEnvironment()
	if err := rec.Register(env, "recording"); err != nil {
		t.Fatal(err)
	}
	b := env.NewStreamBuilder()
	for _, step := range []struct {
		add  func(string) error
		yaml string
	}{
		{b.SetYAML, pipelineYAML},
		{b.SetMetricsYAML, "recording: {}"},
		{b.SetLoggerYAML, "level: none"},
	} {
		if err := step.add(step.yaml); err != nil {
			t.Fatal(err)
		}
	}
	stream, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- stream.Run(ctx) }()
	t.Cleanup(func() {
		defer cancel()
		if err := stream.StopWithin(10 * time.Second); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	})
	return rec
}

// kafka_source_partition_records and _bytes count the records handed to
// the pipeline and their bytes per partition and per reader (the reader
// Flink's owner function gives the partition, as in
// kafka_source_reader_partitions); with partition_metrics: topic, per topic
// and reader. Every metric the input creates is in its table, with its kind
// and labels.
func TestPartitionRecordsAndBytesPerReader(t *testing.T) {
	t.Parallel()
	for _, mode := range []PartitionMetrics{PartitionMetricsPartition, PartitionMetricsTopic} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			_, addr := newFakeClusterOf(t, 4)
			// Partition p gets 2+p records: counts and sizes differ per partition.
			wantRecs, wantBytes := map[string]int64{}, map[string]int64{}
			conf := Config{Readers: 2, Shard: Shard{Count: 1}}
			var total int64
			for p := range int32(4) {
				n := 2 + int(p)
				produceN(t, addr, "t", n, p)
				r := strconv.Itoa(conf.readerOf(topicPartition{topic: "t", partition: p}))
				key := []string{"topic", "t", "partition", strconv.Itoa(int(p)), "reader", r}
				if mode == PartitionMetricsTopic {
					key = []string{"topic", "t", "reader", r}
				}
				for i := range n {
					wantRecs[metrictest.Key(metricPartitionRecords, key...)]++
					wantBytes[metrictest.Key(metricPartitionBytes, key...)] += int64(len(fmt.Sprintf("p%d-%d", p, i)))
					total++
				}
			}
			if len(wantRecs) < 2 {
				t.Fatalf("every partition on one reader (%v): the test cannot tell readers apart", wantRecs)
			}
			rec := recordedStream(t, sourceYAML(addr, "g", "start_from: earliest", "readers: 2", "partition_metrics: "+string(mode)))
			eventually.True(t, testTimeout, fmt.Sprintf("%d records counted per partition", total), func() bool {
				return rec.Total(metricPartitionRecords) == total
			})
			for key, want := range wantRecs {
				if got := rec.Get(key); got != want {
					t.Errorf("%s = %d, want %d (series: %v)", key, got, want, rec.Series(metricPartitionRecords))
				}
			}
			for key, want := range wantBytes {
				if got := rec.Get(key); got != want {
					t.Errorf("%s = %d, want %d (series: %v)", key, got, want, rec.Series(metricPartitionBytes))
				}
			}
			if got := rec.Series(metricPartitionRecords); len(got) != len(wantRecs) {
				t.Errorf("series %v, want %d", got, len(wantRecs))
			}
			if mode == PartitionMetricsPartition {
				rec.CheckFamilies(t, "kafka_source_", metricDocs)
			}
		})
	}
}

// A refused offset commit is counted with its cause.
func TestCommitFailuresByCause(t *testing.T) {
	t.Parallel()
	for code, cause := range map[*kerr.Error]string{
		kerr.RebalanceInProgress: commitRebalance,
		kerr.UnknownServerError:  commitBroker,
	} {
		t.Run(cause, func(t *testing.T) {
			t.Parallel()
			c, addr := newFakeCluster(t)
			produceN(t, addr, "t", 2, 0)
			refuseCommits(c, code)
			rec := recordedStream(t, sourceYAML(addr, "g", "start_from: earliest", "commit_period: 20ms"))
			key := metrictest.Key(metricCommitFailures, "topic", "t", "cause", cause)
			eventually.True(t, testTimeout, key+" counted", func() bool { return rec.Get(key) > 0 })
			if got := rec.Series(metricCommitFailures); len(got) != 1 {
				t.Errorf("commit failures %v, want only %s", got, key)
			}
		})
	}
}

// Each class of commit error has one cause.
func TestCommitFailureCause(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want string
	}{
		{kerr.RebalanceInProgress, commitRebalance},
		{kerr.IllegalGeneration, commitRebalance},
		{kerr.UnknownMemberID, commitRebalance},
		{kerr.StaleMemberEpoch, commitRebalance},
		{&CommitError{Topic: "t", Err: kerr.IllegalGeneration}, commitRebalance},
		{kerr.FencedInstanceID, commitFenced},
		{kerr.GroupAuthorizationFailed, commitPermanent},
		{kafkaconn.WithClass(errors.New("x"), kafkaconn.Permanent), commitPermanent},
		{fmt.Errorf("committing: %w", context.Canceled), commitShutdown},
		{kerr.CoordinatorLoadInProgress, commitBroker},
		{kerr.UnknownServerError, commitBroker},
		{context.DeadlineExceeded, commitBroker},
		{errors.New("connection reset"), commitBroker},
	} {
		if got := commitFailureCause(c.err); got != c.want {
			t.Errorf("cause of %v = %s, want %s", c.err, got, c.want)
		}
	}
}

// The spec's Metrics section lists exactly the metrics of the table, with
// their kinds and labels.
func TestMetricsDocsAgreeWithTable(t *testing.T) {
	t.Parallel()
	var desc string
	service.GlobalEnvironment().WalkInputs(func(name string, v *service.ConfigView) {
		if name == "kafka_source" {
			desc = v.Description()
		}
	})
	if err := metricdoc.Agree(desc, metricDocs); err != nil {
		t.Error(err)
	}
}
