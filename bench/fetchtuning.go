package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Scenario "fetchtuning": kafka_source's fetch_min_bytes and fetch_max_wait
// side by side (docs/troubleshooting.md, "Tuning fetches"). Each round runs
// every setting, in alternating order; per setting, one connectd process
// (kafka_source -> mapping -> stdout) is idle for 10 s on an empty topic
// (CPU), then reads records produced at 1,000 a second for 15 s (end-to-end
// latency, from each record's create time to the mapping, and CPU); then a
// second process reads a catch-up topic of -records records to its end
// (stop_at: latest, drop).
func init() { register("fetchtuning", fetchTuning) }

type fetchSetting struct{ name, minBytes, maxWait string }

var fetchSettings = []fetchSetting{
	{"default: `fetch_min_bytes: 1`, `fetch_max_wait: 500ms`", "1", "500ms"},
	// 10ms is the least franz-go accepts.
	{"`fetch_max_wait: 10ms`", "1", "10ms"},
	{"`fetch_min_bytes: 65536`, `fetch_max_wait: 100ms`", "65536", "100ms"},
}

type fetchResult struct {
	p50, p99, idleCPU, busyCPU, catchupRPS, catchupCPU float64
}

func fetchTuning(ctx context.Context, e env) error {
	const rate, secs = 1000, 15
	catchup, err := ensureTopic(ctx, e.brokers, e.records, e.size, e.partitions)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.brokers), kgo.ProducerLinger(0))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	dir, err := os.MkdirTemp("", "bench-fetchtuning")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	res := make([][]fetchResult, len(fetchSettings))
	var loads []float64
	for round := range e.rounds {
		order := make([]int, len(fetchSettings))
		for i := range order {
			order[i] = i
		}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			s := fetchSettings[i]
			loads = append(loads, loadAverage1())
			topic := fmt.Sprintf("bench-fetch-%d-%d-%d", time.Now().UnixNano(), round, i)
			if _, err := adm.CreateTopic(ctx, int32(e.partitions), 1, nil, topic); err != nil {
				return err
			}
			r, err := fetchLatency(ctx, e, cl, s, dir, topic, rate, secs)
			_, _ = adm.DeleteTopics(ctx, topic)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			rps, cpu, err := fetchCatchup(ctx, e, s, dir, catchup)
			if err != nil {
				return fmt.Errorf("%s: catch-up: %w", s.name, err)
			}
			r.catchupRPS, r.catchupCPU = rps, cpu
			res[i] = append(res[i], r)
			fmt.Fprintf(os.Stderr, "round %d %s: p50 %.0f ms, p99 %.0f ms, idle %.3f cores, at %d/s %.3f cores, catch-up %.0f records/s %.2f CPU s\n",
				round+1, s.name, r.p50, r.p99, r.idleCPU, rate, r.busyCPU, r.catchupRPS, r.catchupCPU)
		}
	}

	fmt.Printf("## Fetch tuning (scenario `fetchtuning`)\n\n%d partitions, %d-byte records, %d rounds in alternating order, medians; load average %s.\n\n",
		e.partitions, e.size, e.rounds, loadRange(loads))
	fmt.Printf("| setting | latency p50 ms | latency p99 ms | CPU idle (cores) | CPU at %d records/s (cores) | catch-up records/s | catch-up CPU s |\n|---|---|---|---|---|---|---|\n", rate)
	for i, s := range fetchSettings {
		m := func(f func(fetchResult) float64) float64 {
			var xs []float64
			for _, r := range res[i] {
				xs = append(xs, f(r))
			}
			return medianOf(xs)
		}
		fmt.Printf("| %s | %.0f | %.0f | %.3f | %.3f | %.0f | %.2f |\n", s.name,
			m(func(r fetchResult) float64 { return r.p50 }), m(func(r fetchResult) float64 { return r.p99 }),
			m(func(r fetchResult) float64 { return r.idleCPU }), m(func(r fetchResult) float64 { return r.busyCPU }),
			m(func(r fetchResult) float64 { return r.catchupRPS }), m(func(r fetchResult) float64 { return r.catchupCPU }))
	}
	fmt.Println()
	return nil
}

func fetchYAML(e env, s fetchSetting, topic, extra, output string) string {
	return fmt.Sprintf(`http: { enabled: false }
logger: { level: info }
input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %q ]
    start_from: earliest
    fetch_min_bytes: %s
    fetch_max_wait: %s
%s
%s
`, e.brokers, topic, s.minBytes, s.maxWait, extra, output)
}

// fetchLatency runs the idle and the steady-rate part of a round.
func fetchLatency(ctx context.Context, e env, cl *kgo.Client, s fetchSetting, dir, topic string, rate, secs int) (fetchResult, error) {
	var r fetchResult
	path := filepath.Join(dir, "latency.yaml")
	yaml := fetchYAML(e, s, topic, "", `pipeline:
  processors:
    - mapping: 'root = (timestamp_unix_milli() - meta("kafka_timestamp_ms").number()).string()'
output:
  stdout: { codec: lines }`)
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		return r, err
	}
	cmd := exec.CommandContext(ctx, e.bin, "run", path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return r, err
	}
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	active := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		closed := false
		for sc.Scan() {
			if !closed && strings.Contains(sc.Text(), "Input type kafka_source is now active") {
				closed = true
				close(active)
			}
		}
	}()
	select {
	case <-active:
	case <-time.After(time.Minute):
		return r, fmt.Errorf("kafka_source not active after a minute")
	}
	c0, _, err := procStats(cmd.Process.Pid)
	if err != nil {
		return r, err
	}
	time.Sleep(10 * time.Second) // the idle period measured, not a wait for a condition
	c1, _, err := procStats(cmd.Process.Pid)
	if err != nil {
		return r, err
	}
	total := rate * secs
	go func() {
		val := make([]byte, e.size)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for n := 0; n < total; {
			<-tick.C
			for range rate / 100 {
				cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(n)), Value: val}, nil)
				n++
			}
		}
	}()
	var lat []float64
	t0 := time.Now()
	sc := bufio.NewScanner(stdout)
	for len(lat) < total && sc.Scan() {
		if x, err := strconv.ParseFloat(sc.Text(), 64); err == nil {
			lat = append(lat, x)
		}
	}
	if len(lat) < total {
		return r, fmt.Errorf("read %d of %d records", len(lat), total)
	}
	busy := time.Since(t0).Seconds()
	c2, _, err := procStats(cmd.Process.Pid)
	if err != nil {
		return r, err
	}
	slices.Sort(lat)
	r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	r.idleCPU, r.busyCPU = (c1-c0)/10, (c2-c1)/busy
	return r, nil
}

// fetchCatchup reads topic to its end and returns records/s and CPU s.
func fetchCatchup(ctx context.Context, e env, s fetchSetting, dir, topic string) (float64, float64, error) {
	path := filepath.Join(dir, "catchup.yaml")
	if err := os.WriteFile(path, []byte(fetchYAML(e, s, topic, "    stop_at: latest", "output:\n  drop: {}")), 0o644); err != nil {
		return 0, 0, err
	}
	cmd := exec.CommandContext(ctx, e.bin, "run", path)
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("%w\n%s", err, out)
	}
	wall := time.Since(t0).Seconds()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, fmt.Errorf("no rusage")
	}
	cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	return float64(e.records) / wall, cpu, nil
}
