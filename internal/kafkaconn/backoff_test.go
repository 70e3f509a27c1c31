package kafkaconn

import (
	"fmt"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/eventually"
)

func TestBackoffDoublesCapsAndResets(t *testing.T) {
	t.Parallel()
	b := NewBackoff(10*time.Millisecond, 35*time.Millisecond)
	if r := b.Remaining(); r != 0 {
		t.Fatalf("Remaining before any failure = %v", r)
	}
	for i, want := range []time.Duration{10, 20, 35, 35} {
		n, delay := b.Fail()
		if n != i+1 || delay != want*time.Millisecond {
			t.Fatalf("failure %d: got (%d, %v), want (%d, %v)", i+1, n, delay, i+1, want*time.Millisecond)
		}
	}
	if r := b.Remaining(); r <= 0 || r > 35*time.Millisecond {
		t.Fatalf("Remaining after a 35ms delay = %v", r)
	}
	eventually.NoError(t, 5*time.Second, "the delay to pass", func() error {
		if r := b.Remaining(); r > 0 {
			return fmt.Errorf("Remaining %v", r)
		}
		return nil
	})
	b.Fail()
	b.Reset()
	if b.Failures() != 0 || b.Remaining() != 0 {
		t.Fatalf("after Reset: failures %d, remaining %v", b.Failures(), b.Remaining())
	}
}
