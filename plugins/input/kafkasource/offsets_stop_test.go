package kafkasource

import "testing"

// TestOffsetTrackerStops: markers and records past the stop offset move the
// position (never past the stop offset); a partition is done when its
// position reaches the stop offset; the read is drained once every
// partition is done and acknowledged, and committed once each position is.
func TestOffsetTrackerStops(t *testing.T) {
	t.Parallel()
	a, b, c := topicPartition{"a", 0}, topicPartition{"a", 1}, topicPartition{"a", 2}
	tr := newOffsetTracker(10)
	if tr.addPartition(a, 0, -1, 5) || tr.addPartition(b, 3, 3, noStop) {
		t.Fatal("partitions with something to read reported finished")
	}
	if !tr.addPartition(c, 7, -1, 7) {
		t.Fatal("an empty partition is not finished at once")
	}
	tr.fetched(positionsOf(a, 0, 1, 2))
	tr.skipped(a, 3) // commit marker
	if got := tr.takeFinished(); len(got) != 0 {
		t.Fatalf("finished %v at position 4 of 5", got)
	}
	if !tr.wanted(a, 4) || tr.wanted(a, 5) || tr.wanted(topicPartition{"x", 0}, 0) {
		t.Fatal("wanted: want offsets below the stop of tracked partitions only")
	}
	tr.skipped(a, 9) // a marker past the stop offset: position stops at 5
	if got := tr.takeFinished(); len(got) != 1 || got[0] != a {
		t.Fatalf("finished %v, want [a/0]", got)
	}
	if next, _ := tr.next(a); next != 5 {
		t.Fatalf("position %d, want the stop offset 5", next)
	}
	if d, _ := tr.drained(); d {
		t.Fatal("drained with an unbounded partition")
	}
	tr.removePartition(b)
	if d, _ := tr.drained(); d {
		t.Fatal("drained with records of a/0 unacknowledged")
	}
	tr.acked(positionsOf(a, 0, 1, 2))
	if d, committed := tr.drained(); !d || committed {
		t.Fatalf("drained %v committed %v, want drained, not committed", d, committed)
	}
	if pos, _ := tr.commitPosition(a); pos != 5 {
		t.Fatalf("commit position %d, want 5 (past the marker)", pos)
	}
	tr.markCommitted(a, 5)
	tr.markCommitted(c, 7)
	if d, committed := tr.drained(); !d || !committed {
		t.Fatalf("drained %v committed %v, want both", d, committed)
	}
}
