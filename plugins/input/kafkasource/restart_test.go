package kafkasource

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// reset_offsets applies start_from to every partition, ignoring the group's
// committed offsets: the offsets it moves are committed at once (before
// anything is read) and each move is logged at warn level naming topic,
// partition and both offsets; a partition without a committed offset has
// nothing to reset and is not logged. The next start without the option
// resumes from what the reset read committed.
func TestSourceResetOffsets(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produceN(t, addr, "t", 5, 0, 1, 2)
	commitOffsets(t, addr, "g", map[topicPartition]int64{tpT(0): 4, tpT(1): 2})

	s, logs := newLoggedTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "reset_offsets: true", "stop_at: latest", "commit_period: 1h"))
	if got, want := committedOffsets(t, addr, "g"), map[topicPartition]int64{tpT(0): 0, tpT(1): 0}; !maps.Equal(got, want) {
		t.Fatalf("committed after connect %v, want the moved partitions at 0: %v", got, want)
	}
	var moves []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "moved from committed") {
			if !strings.Contains(line, "level=WARN") {
				t.Errorf("reset logged below warn level: %s", line)
			}
			moves = append(moves, line)
		}
	}
	if len(moves) != 2 || !strings.Contains(logs.String(), `topic \"t\" partition 0 moved from committed 4 to 0`) ||
		!strings.Contains(logs.String(), `topic \"t\" partition 1 moved from committed 2 to 0`) {
		t.Fatalf("reset log lines %q, want one per moved partition (0: 4 to 0, 1: 2 to 0):\n%s", moves, logs.String())
	}
	first, count := summary(readToEnd(t, s))
	if want := map[topicPartition]int64{tpT(0): 0, tpT(1): 0, tpT(2): 0}; !maps.Equal(first, want) {
		t.Fatalf("first offsets %v, want %v", first, want)
	}
	for tp, n := range count {
		if n != 5 {
			t.Errorf("%s: read %d records, want 5", tp, n)
		}
	}
	waitCommitted(t, addr, "g", map[topicPartition]int64{tpT(0): 5, tpT(1): 5, tpT(2): 5})

	// Without the option, the next start resumes: nothing left to read.
	produceN(t, addr, "t", 1, 1)
	again := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "stop_at: latest"))
	if got := readToEnd(t, again); len(got) != 1 || got[0] != (position{tp: tpT(1), offset: 5}) {
		t.Fatalf("second start read %v, want only t/1 at 5", got)
	}
}

// Without a consumer group, a bounded read delivers every record, ends,
// and commits nothing: the cluster has no group afterwards. A second run
// reads everything again.
func TestSourceNoGroup(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produceN(t, addr, "t", 4, 0, 1, 2)
	conf := "seed_brokers: [ " + addr + " ]\ntopics: [ t ]\nstart_from: earliest\nstop_at: latest\ncommit_period: 10ms\n"
	for run := range 2 {
		s := newTestSource(t, conf)
		if got := readToEnd(t, s); len(got) != 12 {
			t.Fatalf("run %d read %d records, want 12", run, len(got))
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	groups, err := kadm.NewClient(newClient(t, addr)).ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := groups.Groups(); len(names) != 0 {
		t.Fatalf("groups after reads without consumer_group: %q, want none", names)
	}
}
