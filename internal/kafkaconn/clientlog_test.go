package kafkaconn

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// lockedBuffer is a bytes.Buffer safe for the client's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// client_log_level writes the client's own lines into the component's
// logger at that level and above, each at its own level; none (the
// default) writes nothing.
func TestClientLogLevel(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close) // after the parallel subtests
	addr := c.ListenAddrs()[0]
	for _, tc := range []struct {
		level      string // "" leaves the field out
		want, deny []string
	}{
		{level: "", deny: []string{"kafka client:"}},
		{level: "none", deny: []string{"kafka client:"}},
		{level: "debug", want: []string{"level=DEBUG msg=\"kafka client: ", "broker="}},
		{level: "info", want: []string{"level=INFO msg=\"kafka client: "}, deny: []string{"level=DEBUG"}},
		{level: "error", deny: []string{"kafka client:"}}, // a healthy connection logs no error
	} {
		t.Run("level "+tc.level, func(t *testing.T) {
			t.Parallel()
			yaml := fmt.Sprintf("seed_brokers: [ %q ]\n", addr)
			if tc.level != "" {
				yaml += "client_log_level: " + tc.level + "\n"
			}
			cfg, err := parse(t, yaml)
			if err != nil {
				t.Fatal(err)
			}
			logs := &lockedBuffer{}
			logger := service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cl, err := NewConnector(cfg.LogClientTo(logger)).Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// A first produce to a topic logs at info level.
			pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
			_ = cl.ProduceSync(pctx, &kgo.Record{Topic: "events", Value: []byte("v")}).FirstErr()
			pcancel()
			cl.Close()
			got := logs.String()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the log lacks %q:\n%s", w, got)
				}
			}
			for _, d := range tc.deny {
				if strings.Contains(got, d) {
					t.Errorf("the log holds %q:\n%s", d, got)
				}
			}
		})
	}
}

func TestClientLogLevelRefused(t *testing.T) {
	t.Parallel()
	if _, err := parseClientLogLevel("trace"); err == nil || !strings.Contains(err.Error(), "field client_log_level") {
		t.Fatalf("want an error naming field client_log_level, got %v", err)
	}
}
