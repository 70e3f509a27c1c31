package kafkasource

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/connectd/connectd/internal/eventually"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestSourceOffsetOutOfRangeReset: records deleted (as by retention) below
// a partition's fetch position are skipped per committed_fallback, with an
// error log naming topic, partition and the skipped range; the commit
// position follows.
func TestSourceOffsetOutOfRangeReset(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produceN(t, addr, "t", 10, 0)
	s, logs := newLoggedTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "batch_size: 2", "checkpoint_limit: 2", "commit_period: 20ms"))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	// Offsets 0 and 1 are read and held: the partition pauses at the limit.
	first := readRecords(t, s, 2)
	ds := kadm.Offsets{}
	ds.Add(kadm.Offset{Topic: "t", Partition: 0, At: 7})
	resp, err := kadm.NewClient(newClient(t, addr)).DeleteRecords(ctx, ds)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range first {
		if err := b.ack(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	var got []int64
	for len(got) < 3 {
		for _, b := range readRecords(t, s, 1) {
			for _, p := range b.pos {
				got = append(got, p.offset)
			}
			if err := b.ack(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fmt.Sprint(got) != "[7 8 9]" {
		t.Fatalf("offsets after the deletion %v, want them to start at 7", got)
	}
	waitCommitted(t, addr, "g", map[topicPartition]int64{tpT(0): 10, tpT(1): 0, tpT(2): 0})
	want := "topic t partition 0: offsets 2 to 6 are no longer in the log"
	eventually.NoError(t, testTimeout, fmt.Sprintf("the log line %q", want), func() error {
		if logs := logs.String(); !strings.Contains(logs, want) {
			return fmt.Errorf("logs:\n%s", logs)
		}
		return nil
	})
}

// TestSourceBoundedTailDeleted: a bounded read whose remaining records are
// all deleted (as by retention) while its partition waits still ends, with
// the skipped range logged.
func TestSourceBoundedTailDeleted(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produceN(t, addr, "t", 5, 0)
	s, logs := newLoggedTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "stop_at: latest", "batch_size: 1", "checkpoint_limit: 1", "fetch_max_wait: 50ms"))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	b := readRecords(t, s, 1)[0] // offset 0, held: the partition pauses
	ds := kadm.Offsets{}
	ds.Add(kadm.Offset{Topic: "t", Partition: 0, At: 5})
	resp, err := kadm.NewClient(newClient(t, addr)).DeleteRecords(ctx, ds)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ack(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := readToEnd(t, s); len(got) != 0 {
		t.Fatalf("read %v after the deletion, want nothing", got)
	}
	if want := "topic t partition 0: offsets 1 to 4 are no longer in the log"; !strings.Contains(logs.String(), want) {
		t.Fatalf("logs lack %q:\n%s", want, logs.String())
	}
	if c := committedOffsets(t, addr, "g"); c[tpT(0)] != 5 {
		t.Fatalf("committed %v, want 5 for partition 0", c)
	}
}

// newLoggedTestSource is newTestSource with the source's log lines kept in
// the returned buffer.
func newLoggedTestSource(t *testing.T, yaml string) (*source, *lockedBuffer) {
	t.Helper()
	pc, err := testSpec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := configFromParsed(pc)
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	s := newSource(c, service.MockResources(service.MockResourcesOptUseLogger(
		service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(logs, nil))))))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s, logs
}
