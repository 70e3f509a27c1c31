package kafkasource

import (
	"errors"
	"strings"
	"testing"
)

func TestResolveStart(t *testing.T) {
	t.Parallel()
	tp := topicPartition{topic: "orders", partition: 3}
	// The log holds offsets [10, 50); the last stable offset is 45.
	r := func(committed int64) partitionRange {
		return partitionRange{committed: committed, logStart: 10, logEnd: 50, latest: 45}
	}
	tests := []struct {
		name      string
		mode      StartFrom
		fallback  CommittedFallback
		committed int64
		want      int64
		wantErr   string
	}{
		{"earliest ignores committed", StartEarliest, FallbackError, 30, 10, ""},
		{"latest ignores committed", StartLatest, FallbackError, 30, 45, ""},
		{"committed", StartCommitted, FallbackError, 30, 30, ""},
		{"committed at log end", StartCommitted, FallbackError, 50, 50, ""},
		{"committed at log start", StartCommitted, FallbackError, 10, 10, ""},
		{"none, fallback earliest", StartCommitted, FallbackEarliest, -1, 10, ""},
		{"none, fallback latest", StartCommitted, FallbackLatest, -1, 45, ""},
		{"none, fallback error", StartCommitted, FallbackError, -1, 0,
			`consumer group "g" has no committed offset for topic "orders" partition 3`},
		{"below log start, fallback earliest", StartCommitted, FallbackEarliest, 5, 10, ""},
		{"beyond log end, fallback latest", StartCommitted, FallbackLatest, 60, 45, ""},
		{"below log start, fallback error", StartCommitted, FallbackError, 5, 0,
			`committed offset 5 of consumer group "g" for topic "orders" partition 3 is outside the log [10, 50]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := resolveStart(tt.mode, tt.fallback, "g", tp, r(tt.committed))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				var se *StartOffsetError
				if !errors.As(err, &se) || !errors.Is(err, ErrNoCommittedOffset) {
					t.Fatalf("error %v is not a *StartOffsetError wrapping ErrNoCommittedOffset", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}
