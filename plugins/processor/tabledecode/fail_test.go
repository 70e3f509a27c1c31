package tabledecode

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/halt"
)

// syncBuffer is a buffer that the stream's goroutines write logs to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// With a non-Kafka input, on_error fail stops the run with an error that
// names the message index (the bad record is the fourth message, index 3),
// logged once at error level; the bad record never reaches the output.
func TestFailStopsTheRunNamingTheMessageIndex(t *testing.T) {
	t.Parallel()
	sb := service.NewStreamBuilder()
	sb.SetThreads(1)
	var logs syncBuffer
	sb.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	produce, err := sb.AddProducerFunc()
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.AddProcessorYAML(`
table_decode:
  ddl: "CREATE TABLE t (id BIGINT NOT NULL) WITH ('format' = 'json')"
`); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		out []string
	)
	if err := sb.AddConsumerFunc(func(_ context.Context, msg *service.Message) error {
		raw, err := msg.AsBytes()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		out = append(out, string(raw))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stream, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- stream.Run(ctx) }()
	for _, in := range []string{`{"id":0}`, `{"id":1}`, `{"id":2}`, `this is {not json`, `{"id":4}`} {
		if err := produce(ctx, service.NewMessage([]byte(in))); err != nil {
			t.Fatalf("produce %s: %v", in, err)
		}
	}
	if err := stream.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatalf("run: %v", err)
	}

	run := halt.For(stream.Resources())
	if err := run.Err(); err == nil || !strings.Contains(err.Error(), "table_decode (message index 3): format json:") {
		t.Fatalf("want the run stopped with an error naming message index 3, got %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, o := range out {
		if strings.Contains(o, "not json") {
			t.Fatalf("the bad record reached the output: %q", out)
		}
	}
	if len(out) != 4 {
		t.Fatalf("output %q: want the 4 good records", out)
	}
	if n := strings.Count(logs.String(), "message index 3"); n != 1 || !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("want the error logged once at error level, got %d:\n%s", n, logs.String())
	}
}
