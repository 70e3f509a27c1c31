package kafkasource

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/eventually"
)

// closeBound is what an idle source may take to close: a correctness bound
// (issue: an idle pipeline stops within 2s), not a benchmark.
const closeBound = 2 * time.Second

// TestSourceIdleCloseIsQuick: an idle source (everything it handed out is
// acknowledged; its readers hold records fetched ahead that were never
// handed out) closes within closeBound, commits what was acknowledged, and
// logs what it waits for. In group mode the revocation of the partitions as
// the members leave must not wait for the records fetched ahead: they are
// never handed out.
func TestSourceIdleCloseIsQuick(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		extra []string
		logs  []string
	}{
		{"enumerator", []string{"start_from: earliest"}, []string{"closing: committing the offsets of 3 partitions"}},
		{"enumerator, 4 readers", []string{"start_from: earliest", "readers: 4"}, []string{"closing: committing the offsets of 3 partitions"}},
		{"group", []string{"assignment: group"}, []string{"closing: committing the offsets of", `leaving consumer group \"g\"`}},
		{"group, 2 readers", []string{"assignment: group", "readers: 2"}, []string{"closing: committing the offsets of", `leaving consumer group \"g\"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := newCluster(t)
			produceN(t, addr, "t", 30, 0, 1, 2)
			conf := sourceYAML(addr, "g", append(tc.extra, "commit_period: 1h", "batch_size: 1", "checkpoint_limit: 2", "fetch_max_wait: 50ms")...)
			s, logs := newLoggedTestSource(t, conf)
			want := map[topicPartition]int64{}
			for _, b := range readRecords(t, s, 3) {
				if err := b.ack(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
				for _, p := range b.pos {
					want[p.tp] = max(want[p.tp], p.offset+1)
				}
			}
			waitFetchedAhead(t, s)
			start := time.Now()
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > closeBound {
				t.Fatalf("Close of an idle source took %v, want at most %v", took, closeBound)
			}
			got := committedOffsets(t, addr, "g")
			for tp, o := range want {
				if got[tp] != o {
					t.Fatalf("committed %v after close, want the acknowledged %v", got, want)
				}
			}
			for _, l := range tc.logs {
				if !strings.Contains(logs.String(), l) {
					t.Errorf("Close logged no %q:\n%s", l, logs)
				}
			}
		})
	}
}

// waitFetchedAhead waits until s has fetched records it has not handed out.
func waitFetchedAhead(t *testing.T, s *source) {
	t.Helper()
	eventually.True(t, testTimeout, "records fetched ahead", func() (ahead bool) {
		onOwner(s, func(o *owner) { ahead = o.undelivered > 0 })
		return ahead
	})
}

// TestSourceGroupCloseWaitsForRecordsInFlight: a group member that closes
// with a record handed out and not acknowledged says so at info level and
// waits for it (its offset is committed as the partition is released), and
// closes as soon as it is acknowledged.
func TestSourceGroupCloseWaitsForRecordsInFlight(t *testing.T) {
	t.Parallel()
	addr := newTopicsCluster(t, 1, "t")
	produceN(t, addr, "t", 5, 0)
	s, logs := newLoggedTestSource(t, sourceYAML(addr, "g", "assignment: group", "commit_period: 1h", "batch_size: 1", "fetch_max_wait: 50ms"))
	b := readRecords(t, s, 1)[0]
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	eventually.True(t, testTimeout, "Close to log its wait for the record in flight", func() bool {
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) with a record in flight", err)
		default:
		}
		return strings.Contains(logs.String(), "waiting for 1 unacknowledged records of [t/0]")
	})
	if err := b.ack(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(closeBound):
		t.Fatalf("Close did not return within %v of the acknowledgement", closeBound)
	}
	if got, want := committedOffsets(t, addr, "g"), map[topicPartition]int64{tpT(0): 1}; !maps.Equal(got, want) {
		t.Fatalf("committed %v, want %v", got, want)
	}
}
