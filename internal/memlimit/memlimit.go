// Package memlimit sets the Go soft memory limit (GOMEMLIMIT) of a connectd
// process that does not set it itself.
//
// The limit comes from, in this order:
//
//  1. the GOMEMLIMIT environment variable: the runtime applies it, and this
//     package changes nothing;
//  2. the memory limit of the process's cgroup (v2 memory.max, else v1
//     memory.limit_in_bytes): 90 % of it, the rest left to what the Go
//     runtime does not count (the mapped binary, C libraries, the kernel's
//     socket buffers charged to the cgroup);
//  3. otherwise, the byte bounds of the process's components: Base plus
//     twice the sum of what they Reserve (kafka_source its
//     max_unacknowledged_bytes, kafka_sink its max_buffered_bytes), so that
//     the heap may hold what the bounds let in and as much again of garbage
//     before a collection. While nothing is reserved (a pipeline without
//     Kafka components) there is no limit, as in Go's default.
//
// The limit is soft: a live heap above it is not refused, the collector
// only runs more often (the runtime caps it at about half the CPU). With
// GOGC at connectd's default of 400 the limit is what keeps the heap of a
// busy pipeline from growing to five times what is live.
package memlimit

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// Base is what a process needs besides its components' bounds: the Go
// runtime, Benthos and its plugins' state, the clients' fetch and request
// buffers and the messages on their way (a copy at the defaults keeps
// 25-50 MiB live, bounds included), with room for a collection's garbage.
// The mapped binary (about 33 MiB of RSS) is outside the Go limit. 32 MiB
// held the copies' RSS 19 MiB lower but cost 11-25 % more CPU per record
// than 48 MiB (more collections, and assists on the pipeline's goroutines);
// measured with `go run ./bench -scenarios memory` (docs/benchmarks.md).
const Base = 40 << 20

// cgroupShare is the part of a cgroup limit given to the Go heap.
const cgroupShare = 0.9

// Source is where the limit came from.
type Source string

const (
	// FromEnv: GOMEMLIMIT is set; this package changes nothing.
	FromEnv Source = "GOMEMLIMIT"
	// FromCgroup: 90 % of the cgroup's memory limit.
	FromCgroup Source = "cgroup"
	// FromBounds: Base plus twice the components' reservations.
	FromBounds Source = "bounds"
)

var state struct {
	mu       sync.Mutex
	source   Source
	reserved int64
}

// Files read for the cgroup limit; variables so that tests can point them
// elsewhere.
var (
	cgroupV2File = "/sys/fs/cgroup/memory.max"
	cgroupV1File = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
)

// Init chooses the limit at the start of the process and applies it: see
// the package documentation. It returns the source and the limit in bytes
// (0 for FromEnv, whose limit the runtime took itself).
func Init() (Source, int64) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		state.source = FromEnv
		return FromEnv, 0
	}
	if n, ok := cgroupLimit(); ok {
		state.source = FromCgroup
		limit := int64(float64(n) * cgroupShare)
		debug.SetMemoryLimit(limit)
		return FromCgroup, limit
	}
	state.source = FromBounds
	limit := boundsLimit(state.reserved)
	debug.SetMemoryLimit(limit)
	return FromBounds, limit
}

// Reserve adds n bytes of a component's bound to the limit while the limit
// comes from the bounds (before Init, or after it chose FromBounds); the
// returned func takes them off again. Safe for concurrent use.
func Reserve(n int64) (release func()) {
	add(n)
	var once sync.Once
	return func() { once.Do(func() { add(-n) }) }
}

func add(n int64) {
	state.mu.Lock()
	defer state.mu.Unlock()
	state.reserved += n
	if state.source == FromBounds {
		debug.SetMemoryLimit(boundsLimit(state.reserved))
	}
}

// boundsLimit is the limit for reservations of reserved bytes: none
// (math.MaxInt64, Go's default) while nothing is reserved.
func boundsLimit(reserved int64) int64 {
	if reserved <= 0 {
		return math.MaxInt64
	}
	return Base + 2*reserved
}

// cgroupLimit returns the cgroup's memory limit, false if there is none
// (no file, "max", or the v1 way of saying none: a value near 2^63).
func cgroupLimit() (int64, bool) {
	for _, f := range []string{cgroupV2File, cgroupV1File} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		return parseLimit(string(b))
	}
	return 0, false
}

// parseLimit reads a cgroup memory limit file's content.
func parseLimit(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<60 {
		return 0, false
	}
	return n, true
}
