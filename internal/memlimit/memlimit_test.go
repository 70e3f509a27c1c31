package memlimit

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestParseLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"max\n", 0, false},
		{"536870912\n", 512 << 20, true},
		{"9223372036854771712\n", 0, false}, // cgroup v1: no limit
		{"0", 0, false},
		{"-1", 0, false},
		{"junk", 0, false},
	} {
		got, ok := parseLimit(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseLimit(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// withState runs f with the package state and the cgroup files reset, and
// restores the process's memory limit after.
func withState(t *testing.T, v2, v1 string, f func()) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if content != "" {
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	oldV2, oldV1 := cgroupV2File, cgroupV1File
	cgroupV2File, cgroupV1File = write("memory.max", v2), write("memory.limit_in_bytes", v1)
	oldLimit := debug.SetMemoryLimit(-1)
	state.source, state.reserved = "", 0
	t.Cleanup(func() {
		cgroupV2File, cgroupV1File = oldV2, oldV1
		debug.SetMemoryLimit(oldLimit)
		state.source, state.reserved = "", 0
	})
	f()
}

func TestInitFromCgroup(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	for _, tc := range []struct {
		name, v2, v1 string
		want         int64
	}{
		{"v2", "1073741824\n", "", 966367641},
		{"v1 fallback", "", "1073741824\n", 966367641},
		{"v2 without a limit does not fall back", "max\n", "1073741824\n", math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withState(t, tc.v2, tc.v1, func() {
				src, limit := Init()
				if limit != tc.want || debug.SetMemoryLimit(-1) != tc.want {
					t.Errorf("Init = %s %d, limit %d; want %d", src, limit, debug.SetMemoryLimit(-1), tc.want)
				}
				if src != FromCgroup {
					return
				}
				// A reservation does not move a cgroup's limit.
				release := Reserve(64 << 20)
				defer release()
				if got := debug.SetMemoryLimit(-1); got != tc.want {
					t.Errorf("after Reserve the limit is %d, want %d", got, tc.want)
				}
			})
		})
	}
}

func TestInitFromBounds(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	withState(t, "", "", func() {
		early := Reserve(16 << 20) // a component built before Init
		src, limit := Init()
		if src != FromBounds || limit != Base+32<<20 {
			t.Fatalf("Init = %s %d, want %s %d", src, limit, FromBounds, Base+32<<20)
		}
		later := Reserve(8 << 20)
		if got := debug.SetMemoryLimit(-1); got != Base+48<<20 {
			t.Errorf("limit %d after a second reservation, want %d", got, Base+48<<20)
		}
		later()
		later() // a second release changes nothing
		early()
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Errorf("limit %d once both are released, want none (%d)", got, int64(math.MaxInt64))
		}
	})
}

func TestInitLeavesGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	withState(t, "1073741824\n", "", func() {
		debug.SetMemoryLimit(math.MaxInt64)
		src, _ := Init()
		Reserve(16 << 20)
		if src != FromEnv || debug.SetMemoryLimit(-1) != math.MaxInt64 {
			t.Errorf("Init = %s, limit %d: want %s and the limit untouched", src, debug.SetMemoryLimit(-1), FromEnv)
		}
	})
}
