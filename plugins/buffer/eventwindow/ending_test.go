package eventwindow

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/halt"
)

// newEndableBuffer is newTestBuffer with the stream's halt state returned.
func newEndableBuffer(t *testing.T, yaml string) (*Buffer, *halt.Run) {
	t.Helper()
	conf, err := Spec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	c, err := ConfigFromParsed(conf)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	mgr := service.MockResources()
	b := New(c, mgr)
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return b, halt.For(mgr)
}

// waitNacked polls until batch i is acked once with an error wrapping want.
func (a *ackRecorder) waitNacked(t *testing.T, i int, want error) {
	t.Helper()
	got := a.waitAcks(t, i)
	if len(got) != 1 || !errors.Is(got[0], want) {
		t.Fatalf("batch %d acked %v, want one %v", i, got, want)
	}
}

// When the run ends (SIGTERM), the input batches held by open windows are
// nacked at once: Benthos's input waits for them before it stops, and a
// window holds them until a watermark that will not come. The open windows
// are dropped (the next run reads their records again), results that fired
// are still delivered, later writes are refused, and the end of input fires
// nothing more.
func TestRunEndDropsOpenWindows(t *testing.T) {
	t.Parallel()
	b, run := newEndableBuffer(t, "size: 10s\naggregates: {n: count}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var acks ackRecorder
	// Batch 0: one record in [0,10s), one in [10s,20s). Batch 1 moves the
	// watermark past [0,10s), which fires; [10s,20s) stays open.
	if err := b.WriteBatch(ctx, service.MessageBatch{msgOf(in{`{}`, 1000, -1}), msgOf(in{`{}`, 11000, -1})}, acks.fn(0)); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteBatch(ctx, service.MessageBatch{msgOf(in{`{}`, 12000, 10000})}, acks.fn(1)); err != nil {
		t.Fatal(err)
	}

	run.End()
	acks.waitNacked(t, 0, ErrEnding)
	acks.waitNacked(t, 1, ErrEnding)
	if err := b.WriteBatch(ctx, service.MessageBatch{msgOf(in{`{}`, 13000, -1})}, acks.fn(2)); !errors.Is(err, ErrEnding) {
		t.Fatalf("write after the end: want ErrEnding, got %v", err)
	}

	b.EndOfInput()
	batch, ack, err := b.ReadBatch(ctx)
	if err != nil || len(batch) != 1 {
		t.Fatalf("read: %v, %d messages", err, len(batch))
	}
	raw, _ := batch[0].AsBytes()
	if !strings.Contains(string(raw), `"window_start_ms":0`) || !strings.Contains(string(raw), `"n":1`) {
		t.Fatalf("want the fired window [0,10s) with n=1, got %s", raw)
	}
	_ = ack(ctx, nil)
	if _, _, err := b.ReadBatch(ctx); !errors.Is(err, service.ErrEndOfBuffer) {
		t.Fatalf("read after the fired result: want the end of the buffer (the open window was dropped), got %v", err)
	}
	if got := acks.get(0); len(got) != 1 {
		t.Fatalf("batch 0 acked %v after its fired result was delivered: want only its nack", got)
	}
	if run.Stopped() {
		t.Fatal("the end of the run is not an error")
	}
}

// A write waiting for space (fired results not acknowledged yet) gives up
// when the run ends.
func TestRunEndReleasesWaitingWrite(t *testing.T) {
	t.Parallel()
	b, run := newEndableBuffer(t, "size: 10s\nkey: ${! json(\"k\") }\naggregates: {n: count}\nmax_open_windows: 1\n")
	var acks ackRecorder
	writeEach(t, b, &acks, []in{{`{"k":1}`, 1, 10000}}) // fires at once, not acked
	done := make(chan error, 1)
	go func() {
		done <- b.WriteBatch(context.Background(), service.MessageBatch{msgOf(in{`{"k":2}`, 20000, -1})}, acks.fn(9))
	}()
	waitWriteBlocked(t, b, done)
	run.End()
	select {
	case err := <-done:
		if !errors.Is(err, ErrEnding) {
			t.Fatalf("want ErrEnding, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the write still waits 5s after the run ended")
	}
}
