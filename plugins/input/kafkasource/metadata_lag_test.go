package kafkasource

import (
	"testing"
)

// TestSourceLagMetadata: each record carries kafka_lag, the records after it
// in its partition when it was fetched (high watermark minus next offset).
func TestSourceLagMetadata(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produceN(t, addr, "t", 5, 1)
	s := newTestSource(t, sourceYAML(addr, "g", "start_from: earliest", "stop_at: latest"))
	n := 0
	for _, b := range readRecords(t, s, 5) {
		for i, m := range b.msgs {
			lag, ok := m.MetaGetMut(metaLag)
			if want := 5 - b.pos[i].offset - 1; !ok || lag != want {
				t.Errorf("offset %d: %s = %#v, want %d", b.pos[i].offset, metaLag, lag, want)
			}
			n++
		}
	}
	if n != 5 {
		t.Fatalf("read %d records, want 5", n)
	}
}
