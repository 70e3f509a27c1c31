package main

// Scenario "formats": the table-driven codecs of schema/format against the
// libraries under them, decode and encode of one ~200-byte row per format.
// It runs the Go benchmarks BenchmarkFormats of package schema/format (see
// schema/format/benchmark_test.go) in N rounds of `go test -cpu 1 -count 1`,
// takes the median of the N runs of each benchmark, and prints a Markdown
// table. It needs no broker:
//
//	go run ./bench -scenarios formats [-formats-count 5] [-formats-benchtime 1s]
//
// -formats-input renders a saved `go test -bench` output instead of running.

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	formatsCount     = flag.Int("formats-count", 5, "scenario formats: runs of each benchmark (the report gives medians)")
	formatsBenchtime = flag.String("formats-benchtime", "1s", "scenario formats: go test -benchtime of each run")
	formatsPkg       = flag.String("formats-pkg", "./schema/format/", "scenario formats: package holding BenchmarkFormats")
	formatsInput     = flag.String("formats-input", "", "scenario formats: render this saved `go test -bench` output instead of running")
	formatsRaw       = flag.String("formats-raw", "", "scenario formats: also save the `go test -bench` output to this file")
)

func init() { register("formats", runFormats) }

// benchLine is one result line of `go test -bench`.
type benchLine struct {
	name   string // without the Benchmark prefix and -GOMAXPROCS suffix
	nsOp   float64
	allocs float64
}

func runFormats(ctx context.Context, _ env) error {
	var out []byte
	if *formatsInput != "" {
		b, err := os.ReadFile(*formatsInput)
		if err != nil {
			return err
		}
		out = b
	} else {
		// One `go test -count 1` per round rather than -count N, which
		// repeats each benchmark back to back: rounds interleave the
		// contenders in time, so that a noisy neighbour hits them alike.
		args := []string{"test", "-run", "^$", "-bench", "^BenchmarkFormats$", "-benchmem",
			"-cpu", "1", "-count", "1", "-benchtime", *formatsBenchtime, *formatsPkg}
		var buf bytes.Buffer
		for i := range *formatsCount {
			fmt.Fprintf(os.Stderr, "formats round %d/%d: go %s\n", i+1, *formatsCount, strings.Join(args, " "))
			cmd := exec.CommandContext(ctx, "go", args...)
			cmd.Stdout = io.MultiWriter(&buf, os.Stderr)
			cmd.Stderr = os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("go test -bench, round %d: %w", i+1, err)
			}
		}
		out = buf.Bytes()
		if *formatsRaw != "" {
			if err := os.WriteFile(*formatsRaw, out, 0o644); err != nil {
				return err
			}
		}
	}
	lines, err := parseBench(out)
	if err != nil {
		return err
	}
	return printFormats(os.Stdout, out, lines)
}

// parseBench reads the result lines of BenchmarkFormats.
func parseBench(out []byte) ([]benchLine, error) {
	var lines []benchLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkFormats/") {
			continue
		}
		l := benchLine{name: strings.TrimPrefix(f[0], "Benchmark")}
		if i := strings.LastIndexByte(l.name, '-'); i > 0 {
			if _, err := strconv.Atoi(l.name[i+1:]); err == nil {
				l.name = l.name[:i]
			}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("bench line %q: %w", sc.Text(), err)
			}
			switch f[i+1] {
			case "ns/op":
				l.nsOp = v
			case "allocs/op":
				l.allocs = v
			}
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("no BenchmarkFormats results in the go test output")
	}
	return lines, sc.Err()
}

// contender is the medians of one benchmark over its runs.
type contender struct {
	nsOp, allocs float64
	runs         int
}

func (c contender) rps() float64 { return 1e9 / c.nsOp }

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// goalRatio is issue 5's goal: the table-driven codec costs at most this
// many times the bare library.
const goalRatio = 1.3

func printFormats(w io.Writer, raw []byte, lines []benchLine) error {
	ns := map[string][]float64{}
	allocs := map[string][]float64{}
	var order []string // <format>/<op>, as first seen
	bares := map[string][]string{}
	for _, l := range lines {
		parts := strings.Split(strings.TrimPrefix(l.name, "Formats/"), "/")
		if len(parts) != 3 {
			continue
		}
		key := parts[0] + "/" + parts[1]
		if _, seen := bares[key]; !seen {
			order = append(order, key)
			bares[key] = nil
		}
		if parts[2] != "table" && !slices.Contains(bares[key], parts[2]) {
			bares[key] = append(bares[key], parts[2])
		}
		ns[l.name] = append(ns[l.name], l.nsOp)
		allocs[l.name] = append(allocs[l.name], l.allocs)
	}
	get := func(name string) (contender, bool) {
		xs, ok := ns[name]
		if !ok {
			return contender{}, false
		}
		return contender{nsOp: medianOf(xs), allocs: medianOf(allocs[name]), runs: len(xs)}, true
	}
	// ratios pairs the runs of two benchmarks by round: each round runs
	// them close in time, so that their ratio suffers less from the
	// machine's load than the ratio of the medians.
	ratios := func(table, bare string) []float64 {
		t, b := ns[table], ns[bare]
		out := make([]float64, 0, min(len(t), len(b)))
		for i := range min(len(t), len(b)) {
			out = append(out, t[i]/b[i])
		}
		return out
	}
	cpu := "unknown"
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if c, ok := strings.CutPrefix(sc.Text(), "cpu: "); ok {
			cpu = c
		}
	}
	runs := 0
	for _, xs := range ns {
		runs = max(runs, len(xs))
	}
	fmt.Fprintf(w, "## %s — format codecs vs bare libraries (scenario formats)\n\n", time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(w, "%s, %s, cpu %s, %d logical CPUs; %d rounds of `go test -bench ^BenchmarkFormats$ -cpu 1 -count 1 -benchtime %s`; medians of %d runs. records/s is per core (1e9 / ns/op, GOMAXPROCS 1). The ratio is the median of the per-round ratios (table and bare run back to back in each round); the range shows the noise.\n\n",
		runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH, cpu, runtime.NumCPU(), runs, *formatsBenchtime, runs)
	fmt.Fprintln(w, "| format | op | table ns/op | table records/s | bare library | bare ns/op | bare records/s | ratio table / bare | per-round ratios | allocs table / bare |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	var missed []string
	for _, key := range order {
		t, ok := get("Formats/" + key + "/table")
		if !ok {
			continue
		}
		fmtName, op, _ := strings.Cut(key, "/")
		for i, bare := range bares[key] {
			b, _ := get("Formats/" + key + "/" + bare)
			rs := ratios("Formats/"+key+"/table", "Formats/"+key+"/"+bare)
			ratio := medianOf(rs)
			mark := ""
			if i == 0 && ratio > goalRatio {
				mark = " (over)"
				missed = append(missed, fmt.Sprintf("%s %s %.2fx", fmtName, op, ratio))
			}
			fmt.Fprintf(w, "| %s | %s | %.0f | %.0f | %s | %.0f | %.0f | **%.2f**%s | %.2f–%.2f | %.0f / %.0f |\n",
				fmtName, op, t.nsOp, t.rps(), strings.TrimPrefix(bare, "bare-"), b.nsOp, b.rps(), ratio, mark, slices.Min(rs), slices.Max(rs), t.allocs, b.allocs)
		}
	}
	fmt.Fprintln(w)
	if len(missed) == 0 {
		fmt.Fprintf(w, "Goal (issue 5): table-driven at most %.1fx the bare library: met for every format and operation.\n", goalRatio)
	} else {
		fmt.Fprintf(w, "Goal (issue 5): table-driven at most %.1fx the first bare library of each row: missed by %s.\n", goalRatio, strings.Join(missed, ", "))
	}
	return nil
}
