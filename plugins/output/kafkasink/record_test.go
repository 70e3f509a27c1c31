package kafkasink

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Interpolations see the whole batch: batch_index() and batch_size() work in
// topic, key, partition and timestamp_ms.
func TestRecordsInterpolateOverTheBatch(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(t, `
seed_brokers: [ "127.0.0.1:9092" ]
topic: 't-${! batch_size() }'
key: '${! batch_index() }-${! content() }'
timestamp_ms: '${! 1000 + batch_index() }'
partitioner: manual
partition: '${! batch_index() % 2 }'
`)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(cfg, service.MockResources())
	if err != nil {
		t.Fatal(err)
	}
	batch := service.MessageBatch{service.NewMessage([]byte("a")), service.NewMessage([]byte("b")), service.NewMessage([]byte("c"))}
	recs, errs := s.buildRecords(batch)
	for i, r := range recs {
		if errs[i] != nil {
			t.Fatalf("record %d: %v", i, errs[i])
		}
		v, _ := batch[i].AsBytes()
		if r.Topic != "t-3" || string(r.Key) != fmt.Sprintf("%d-%s", i, v) || r.Timestamp.UnixMilli() != int64(1000+i) || r.Partition != int32(i%2) {
			t.Errorf("record %d: topic %q key %q timestamp %d partition %d", i, r.Topic, r.Key, r.Timestamp.UnixMilli(), r.Partition)
		}
	}
}

// BenchmarkBuildRecords builds the records of one 10,000-message batch with
// an interpolated key: linear in the batch size (see batchRecords).
func BenchmarkBuildRecords(b *testing.B) {
	pc, err := Spec().ParseYAML(`
seed_brokers: [ "127.0.0.1:9092" ]
topic: out
key: '${! meta("kafka_key") }'
`, nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := ConfigFromParsed(pc)
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewSink(cfg, service.MockResources())
	if err != nil {
		b.Fatal(err)
	}
	batch := make(service.MessageBatch, 10_000)
	for i := range batch {
		batch[i] = service.NewMessage(make([]byte, 200))
		batch[i].MetaSetMut("kafka_key", strconv.Itoa(i))
	}
	b.ResetTimer()
	for b.Loop() {
		s.buildRecords(batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/record")
}

// Only failed produces can mean a lost cluster: a batch whose records all
// failed to build, with errors that wrap io.EOF, is a batch error, not a
// reconnect.
func TestBatchResultConnectionErrors(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(t, "seed_brokers: [ \"127.0.0.1:9092\" ]\ntopic: out\n")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(cfg, service.MockResources())
	if err != nil {
		t.Fatal(err)
	}
	batch := service.MessageBatch{service.NewMessage([]byte("a")), service.NewMessage([]byte("b"))}
	built := s.batchResult(batch, []error{fmt.Errorf("field key: %w", io.ErrUnexpectedEOF), fmt.Errorf("encode: %w", io.EOF)})
	var berr *service.BatchError
	if !errors.As(built, &berr) || errors.Is(built, service.ErrNotConnected) {
		t.Errorf("records that failed to build: got %v, want a batch error", built)
	}
	lost := s.batchResult(batch, []error{&ProduceError{Topic: "out", Err: io.EOF}, &ProduceError{Topic: "out", Err: io.EOF}})
	if !errors.Is(lost, service.ErrNotConnected) {
		t.Errorf("every produce lost its connection: got %v, want ErrNotConnected", lost)
	}
}
