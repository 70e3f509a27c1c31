package kafkaconn

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBackoffDoublesCapsAndResets(t *testing.T) {
	t.Parallel()
	b := NewBackoff(10*time.Millisecond, 35*time.Millisecond)
	for i, want := range []time.Duration{10, 20, 35, 35} {
		n, delay := b.Fail()
		if n != i+1 || delay != want*time.Millisecond {
			t.Fatalf("failure %d: got (%d, %v), want (%d, %v)", i+1, n, delay, i+1, want*time.Millisecond)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Wait(ctx, "retry"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context during a back-off = %v", err)
	}
	began := time.Now()
	if err := b.Wait(context.Background(), "retry"); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(began); waited < 20*time.Millisecond {
		t.Fatalf("Wait returned after %v, want about 35ms", waited)
	}
	b.Reset()
	if b.Failures() != 0 {
		t.Fatalf("failures after Reset = %d", b.Failures())
	}
	if err := b.Wait(ctx, "retry"); err != nil {
		t.Fatalf("Wait after Reset = %v, want no wait", err)
	}
}
