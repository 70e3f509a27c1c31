package kafkasource

import (
	"errors"
	"strings"
	"testing"
)

func TestResolveStart(t *testing.T) {
	t.Parallel()
	tp := topicPartition{topic: "orders", partition: 3}
	// The log holds offsets [10, 50); the last stable offset is 45; the
	// first record at or after start_timestamp is at 20; start_offsets
	// gives 25 unless a case says otherwise.
	r := func(committed int64) partitionRange {
		return partitionRange{committed: committed, logStart: 10, logEnd: 50, latest: 45, atTimestamp: 20, specified: 25}
	}
	unlisted := func(committed int64) partitionRange {
		pr := r(committed)
		pr.specified = -1
		return pr
	}
	specified := func(committed, at int64) partitionRange {
		pr := r(committed)
		pr.specified = at
		return pr
	}
	tests := []struct {
		name     string
		mode     StartFrom
		fallback CommittedFallback
		r        partitionRange
		want     int64
		wantErr  string
	}{
		// A committed offset is the pipeline's state: every mode resumes
		// there (DESIGN.md contract 8).
		{"earliest resumes from committed", StartEarliest, FallbackError, r(30), 30, ""},
		{"latest resumes from committed", StartLatest, FallbackError, r(30), 30, ""},
		{"timestamp resumes from committed", StartTimestamp, FallbackError, r(30), 30, ""},
		{"offsets resume from committed", StartOffsets, FallbackError, r(30), 30, ""},
		{"committed", StartCommitted, FallbackError, r(30), 30, ""},
		{"committed at log end", StartCommitted, FallbackError, r(50), 50, ""},
		{"committed at log start", StartCommitted, FallbackError, r(10), 10, ""},
		// Without one, the mode places the partition.
		{"earliest, none committed", StartEarliest, FallbackError, r(-1), 10, ""},
		{"latest, none committed", StartLatest, FallbackError, r(-1), 45, ""},
		{"timestamp, none committed", StartTimestamp, FallbackError, r(-1), 20, ""},
		{"offsets, none committed", StartOffsets, FallbackError, r(-1), 25, ""},
		{"offsets, unlisted, fallback latest", StartOffsets, FallbackLatest, unlisted(-1), 45, ""},
		{"offsets, unlisted, fallback error", StartOffsets, FallbackError, unlisted(-1), 0,
			`consumer group "g" has no committed offset for topic "orders" partition 3`},
		{"offsets, outside the log, fallback earliest", StartOffsets, FallbackEarliest, specified(-1, 60), 10, ""},
		{"offsets, outside the log, fallback error", StartOffsets, FallbackError, specified(-1, 60), 0,
			`offset 60 of topic "orders" partition 3 in start_offsets is outside the log [10, 50]`},
		{"none, fallback earliest", StartCommitted, FallbackEarliest, r(-1), 10, ""},
		{"none, fallback latest", StartCommitted, FallbackLatest, r(-1), 45, ""},
		{"none, fallback error", StartCommitted, FallbackError, r(-1), 0,
			`consumer group "g" has no committed offset for topic "orders" partition 3`},
		// A committed offset outside the log goes to committed_fallback,
		// whatever the mode.
		{"below log start, fallback earliest", StartCommitted, FallbackEarliest, r(5), 10, ""},
		{"beyond log end, fallback latest", StartCommitted, FallbackLatest, r(60), 45, ""},
		{"below log start, fallback error", StartCommitted, FallbackError, r(5), 0,
			`committed offset 5 of consumer group "g" for topic "orders" partition 3 is outside the log [10, 50]`},
		{"earliest, beyond log end, fallback latest", StartEarliest, FallbackLatest, r(60), 45, ""},
		{"timestamp, below log start, fallback error", StartTimestamp, FallbackError, r(5), 0,
			`committed offset 5 of consumer group "g" for topic "orders" partition 3 is outside the log [10, 50]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := resolveStart(tt.mode, tt.fallback, "g", tp, tt.r)
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
