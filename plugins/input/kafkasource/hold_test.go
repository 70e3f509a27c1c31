package kafkasource

import (
	"math/rand/v2"
	"testing"
)

// TestTrackerHoldRule checks the pending-durable rule: whatever the order of
// acknowledgements and durability reports, no commit position is past a
// record that is unacknowledged or held (acknowledged, not durable), and the
// position reaches one past the last record once every record is
// acknowledged and every hold released.
func TestTrackerHoldRule(t *testing.T) {
	t.Parallel()
	const (
		batches = 40
		size    = 5
	)
	tpB := topicPartition{topic: "b", partition: 3}
	type batch struct {
		ps               []position
		held, acked, rel bool
		steps            []func()
	}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		tr := newOffsetTracker(1 << 20)
		tr.addPartition(tpA, 0, -1, noStop)
		tr.addPartition(tpB, 100, -1, noStop)
		bs := make([]*batch, batches)
		for i := range bs {
			b := &batch{}
			for j := range size {
				b.ps = append(b.ps, position{tp: tpA, offset: int64(i*size + j)}, position{tp: tpB, offset: int64(100 + i*size + j)})
			}
			tr.fetched(b.ps)
			id := holdID(i + 1)
			// Most batches go through a sink that holds them before
			// WriteBatch returns, so before their ack, and releases
			// them once durable; the rest are acked only (the
			// synchronous path).
			if rng.IntN(4) != 0 {
				b.steps = append(b.steps, func() {
					low := map[topicPartition]int64{}
					for _, p := range b.ps {
						if cur, ok := low[p.tp]; !ok || p.offset < cur {
							low[p.tp] = p.offset
						}
					}
					if nt := tr.hold(id, low, nil); nt != nil {
						t.Fatalf("hold: not tracked %v", nt)
					}
					b.held = true
				})
			}
			b.steps = append(b.steps, func() { tr.acked(b.ps); b.acked = true })
			if len(b.steps) == 2 {
				b.steps = append(b.steps, func() { tr.release([]holdID{id}, nil); b.rel = true })
			}
			bs[i] = b
		}
		for {
			var live []*batch
			for _, b := range bs {
				if len(b.steps) > 0 {
					live = append(live, b)
				}
			}
			if len(live) == 0 {
				break
			}
			b := live[rng.IntN(len(live))]
			b.steps[0]()
			b.steps = b.steps[1:]
			for _, tp := range []topicPartition{tpA, tpB} {
				pos, _ := tr.commitPosition(tp)
				for _, ob := range bs {
					for _, p := range ob.ps {
						if p.tp == tp && p.offset < pos && (!ob.acked || (ob.held && !ob.rel)) {
							t.Fatalf("seed %d: %v commit position %d passes offset %d (acked %v, held %v, released %v)",
								seed, tp, pos, p.offset, ob.acked, ob.held, ob.rel)
						}
					}
				}
			}
		}
		for tp, want := range map[topicPartition]int64{tpA: batches * size, tpB: 100 + batches*size} {
			if pos, _ := tr.commitPosition(tp); pos != want {
				t.Fatalf("seed %d: %v ends at %d, want %d", seed, tp, pos, want)
			}
		}
		if d, _ := tr.drained(); d {
			t.Fatal("drained without stop offsets")
		}
	}
}

// TestTrackerHoldCommits checks what a held partition commits: the source's
// own commits and a transaction's prepare stop below a held record, a
// transaction commits what its own holds cover, and the positions a rewound
// session resumes from are the lowest offsets not yet durable.
func TestTrackerHoldCommits(t *testing.T) {
	t.Parallel()
	tr := newOffsetTracker(100)
	tr.addPartition(tpA, 0, -1, noStop)
	tr.fetched(positionsOf(tpA, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9))
	// Transaction 1 holds 0-3, transaction 2 holds 4-6; 7-9 are still in
	// the pipeline.
	tr.hold(1, map[topicPartition]int64{tpA: 0}, nil)
	tr.acked(positionsOf(tpA, 0, 1, 2, 3))
	tr.hold(2, map[topicPartition]int64{tpA: 4}, nil)
	tr.acked(positionsOf(tpA, 4, 5, 6))
	if got := tr.selfCommits(true); got[tpA] != 0 {
		t.Fatalf("self commit %v, want 0 (records 0-6 are held)", got)
	}
	pos, nt := tr.prepareHeld([]holdID{1}, []topicPartition{tpA})
	if nt != nil || pos[tpA] != 4 {
		t.Fatalf("prepare of transaction 1 = %v %v, want 4 (transaction 2 holds 4)", pos, nt)
	}
	// A transaction marks the partition: the source no longer commits it
	// while records are held or in flight.
	if got := tr.selfCommits(true); len(got) != 0 {
		t.Fatalf("self commit of a transaction's partition with records held: %v", got)
	}
	tr.markCommitted(tpA, 4)
	tr.release([]holdID{1}, nil)
	// Transaction 2 aborts: a rewound session resumes at 4.
	if got := tr.positions(); got[tpA] != 4 {
		t.Fatalf("positions after transaction 2 aborted = %v, want 4", got)
	}
	pos, _ = tr.prepareHeld([]holdID{2}, []topicPartition{tpA})
	if pos[tpA] != 7 {
		t.Fatalf("prepare of transaction 2 = %v, want 7 (7 is not acknowledged)", pos)
	}
	tr.acked(positionsOf(tpA, 7, 8, 9))
	pos, _ = tr.prepareHeld([]holdID{2}, []topicPartition{tpA})
	if pos[tpA] != 10 {
		t.Fatalf("prepare of transaction 2 once 7-9 are filtered out = %v, want 10", pos)
	}
	// A hold on a partition the session does not track is refused whole.
	tpX := topicPartition{topic: "x", partition: 1}
	if nt := tr.hold(3, map[topicPartition]int64{tpA: 10, tpX: 0}, nil); len(nt) != 1 || nt[0] != tpX {
		t.Fatalf("hold with an untracked partition: %v", nt)
	}
	if tr.holds(tpA) != 1 {
		t.Fatalf("holds = %d, want 1 (transaction 2's; the refused hold left nothing)", tr.holds(tpA))
	}
}

// TestTrackerPrepareHeldCountsOwnUnacked: a round's last batch is held, but
// Benthos's acknowledgement of it (sent on a goroutine of its own after the
// sink's WriteBatch returned) has not reached the owner when the round
// prepares. Its records are in the transaction: the commit covers them. A
// hold whose span is unknown (its offsets not contiguous) covers only what
// is acknowledged, as before.
func TestTrackerPrepareHeldCountsOwnUnacked(t *testing.T) {
	t.Parallel()
	tr := newOffsetTracker(100)
	tr.addPartition(tpA, 0, -1, noStop)
	tr.fetched(positionsOf(tpA, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11))
	// The round holds 0-4 (acknowledged) and 5-7 (acknowledgement on its
	// way); the next round holds 8-9; 10-11 are in the pipeline.
	tr.hold(1, map[topicPartition]int64{tpA: 0}, map[topicPartition]int64{tpA: 4})
	tr.acked(positionsOf(tpA, 0, 1, 2, 3, 4))
	tr.hold(2, map[topicPartition]int64{tpA: 5}, map[topicPartition]int64{tpA: 7})
	tr.hold(3, map[topicPartition]int64{tpA: 8}, map[topicPartition]int64{tpA: 9})
	pos, _ := tr.prepareHeld([]holdID{1, 2}, []topicPartition{tpA})
	if pos[tpA] != 8 {
		t.Fatalf("prepare of the round = %v, want 8 (its records 5-7 are in it; 8 is the next round's)", pos)
	}
	// The round commits; the acknowledgement of 5-7 is still on its way.
	tr.markCommitted(tpA, 8)
	tr.release([]holdID{1, 2}, nil)
	tr.hold(4, map[topicPartition]int64{tpA: 10}, nil) // span unknown
	pos, _ = tr.prepareHeld([]holdID{3, 4}, []topicPartition{tpA})
	if pos[tpA] != 10 {
		t.Fatalf("prepare of the next round = %v, want 10 (5-7 are committed, 8-9 its own, 10 only known as held)", pos)
	}
}
