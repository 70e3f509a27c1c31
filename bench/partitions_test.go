package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestWatchedPeakRSSIsTheChilds pins that a run which exits on its own
// reports its own peak resident set, not the bench's: the child's rusage
// (ru_maxrss) carries the peak of the parent's memory map, which Go's
// clone(CLONE_VM|CLONE_VFORK) shares until exec, so a bench that holds
// 256 MiB would report at least that for a shell.
func TestWatchedPeakRSSIsTheChilds(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	const held = 256 << 20
	ballast := make([]byte, held)
	for i := range ballast {
		ballast[i] = 1
	}
	bin := filepath.Join(t.TempDir(), "fake-connectd")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec sleep 0.5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := runConnectdWatched(ctx, bin, "", watchOpts{})
	runtime.KeepAlive(ballast)
	if err != nil {
		t.Fatal(err)
	}
	if r.PeakRSS <= 0 || r.PeakRSS > 64<<10 {
		t.Fatalf("peak RSS of a sleeping shell: %d KiB, want more than 0 and at most 64 MiB (the bench holds %d MiB)", r.PeakRSS, held>>20)
	}
}
