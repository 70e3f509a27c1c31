package tablespec

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// The skip log is rate-limited: one line per SkipLogInterval, carrying the
// count of records skipped in between.
func TestSkipLogIsRateLimited(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(&buf, nil)))
	b := NewBad("table_decode", PolicySkip, service.MockResources(service.MockResourcesOptUseLogger(logger)))
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for i := range 5 {
		b.logSkipped(errors.New("bad"), t0.Add(time.Duration(i)*time.Second))
	}
	b.logSkipped(errors.New("worse"), t0.Add(SkipLogInterval))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "skipped a bad record: bad") ||
		!strings.Contains(lines[1], "and 4 more since the last report): worse") {
		t.Fatalf("log:\n%s", buf.String())
	}
}

func TestLocate(t *testing.T) {
	t.Parallel()
	m := service.NewMessage(nil)
	if got := Locate(m); got != "" {
		t.Fatalf("no kafka metadata: %q", got)
	}
	m.MetaSetMut("kafka_topic", "t")
	m.MetaSetMut("kafka_offset", int64(5))
	if got := Locate(m); got != " (topic t, partition -, offset 5)" {
		t.Fatalf("got %q", got)
	}
}
