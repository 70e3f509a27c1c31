package table

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/halt"
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
	if got := LocateIndex(m, 7); got != " (message index 7)" {
		t.Fatalf("no kafka metadata, index 7: %q", got)
	}
	m.MetaSetMut("kafka_topic", "t")
	m.MetaSetMut("kafka_offset", int64(5))
	if got := Locate(m); got != " (topic t, partition -, offset 5)" {
		t.Fatalf("got %q", got)
	}
	if got := LocateIndex(m, 7); got != " (topic t, partition -, offset 5)" {
		t.Fatalf("kafka metadata wins over the index: %q", got)
	}
}

// Under fail, Handle drops the record and stops the run with an error that
// names the component, the record and the way to keep going; the first
// stop is logged once at error level, later bad records add nothing. skip
// and dead_letter never stop the run.
func TestFailStopsTheRun(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	mgr := service.MockResources(service.MockResourcesOptUseLogger(service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(&buf, nil)))))
	b := NewBad("table_decode", PolicyFail, mgr)
	msg := service.NewMessage([]byte("this is {not json"))
	out, stop := b.Handle(msg, LocateIndex(msg, 3), errors.New("bad"))
	if out != nil || !stop {
		t.Fatalf("fail: out %v, stop %v; want nothing passed on and stop", out, stop)
	}
	const want = "table_decode (message index 3): bad (on_error: fail ends the run; skip or dead_letter keep it going)"
	run := halt.For(mgr)
	if err := run.Err(); err == nil || err.Error() != want {
		t.Fatalf("halt error %v, want %q", err, want)
	}
	if out, stop := b.Handle(msg, LocateIndex(msg, 4), errors.New("worse")); out != nil || !stop {
		t.Fatalf("fail after the stop: out %v, stop %v", out, stop)
	}
	if err := run.Err(); err.Error() != want {
		t.Fatalf("the first error ends the run, got %v", err)
	}
	if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); len(lines) != 1 ||
		!strings.Contains(lines[0], "level=ERROR") || !strings.Contains(lines[0], want) {
		t.Fatalf("want one error line with %q, got:\n%s", want, buf.String())
	}

	for _, p := range []Policy{PolicySkip, PolicyDeadLetter} {
		mgr := service.MockResources()
		out, stop := NewBad("table_decode", p, mgr).Handle(service.NewMessage(nil), "", errors.New("bad"))
		if stop || halt.For(mgr).Stopped() {
			t.Fatalf("%s stops the run", p)
		}
		if (p == PolicyDeadLetter) != (len(out) == 1 && out[0].GetError() != nil) {
			t.Fatalf("%s: out %v", p, out)
		}
	}
}
