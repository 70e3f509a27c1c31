package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var receivedRe = regexp.MustCompile(`(?m)^input_received\{[^}]*\} ([0-9.e+]+)$`)

// runConnectdSource runs kafka_source -> drop until the input has counted
// records records, polling /metrics.
// extra is YAML appended to the kafka_source block (four-space indent).
func runConnectdSource(ctx context.Context, bin, brokers, topic string, records int64, extra string, env []string) (result, error) {
	group := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	yaml := fmt.Sprintf(`
input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %q ]
    consumer_group: %q
    start_from: earliest
%s
output:
  drop: {}
`, brokers, topic, group, extra)
	r, _, err := runConnectd(ctx, bin, yaml, env, receivedRe, records)
	r.Bytes = r.Records * int64(recordSizeOf(topic))
	return r, err
}

// runConnectd runs connectd with the pipeline yaml (its http and logger
// sections are added) until the series done matches at /metrics sum to at
// least records. It returns the run's figures (Bytes unset) and the last
// /metrics page.
func runConnectd(ctx context.Context, bin, yaml string, env []string, done *regexp.Regexp, records int64) (result, string, error) {
	port, err := freePort()
	if err != nil {
		return result{}, "", err
	}
	dir, err := os.MkdirTemp("", "connectd-bench")
	if err != nil {
		return result{}, "", err
	}
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "pipeline.yaml")
	yaml = fmt.Sprintf("http:\n  address: 127.0.0.1:%d\nlogger:\n  level: warn\n%s", port, yaml)
	if err := os.WriteFile(conf, []byte(yaml), 0o644); err != nil {
		return result{}, "", err
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, bin, "run", conf)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return result{}, "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill(); <-exited }()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	deadline := start.Add(10 * time.Minute)
	var startup float64
	var first int64
	for time.Now().Before(deadline) {
		body := scrape(url)
		n := sumMetric(done, body)
		if n > 0 && first == 0 {
			startup, first = time.Since(start).Seconds(), n
		}
		if n >= records {
			wall := time.Since(start).Seconds()
			cpu, rss, err := procStats(cmd.Process.Pid)
			if err != nil {
				return result{}, "", err
			}
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return result{Records: n, Wall: wall, CPU: cpu, PeakRSS: rss, Startup: startup, FirstCount: first}, body, nil
		}
		select {
		case err := <-exited:
			exited <- err // for the deferred wait
			return result{}, "", fmt.Errorf("connectd exited (%v) after counting %d of %d records", err, n, records)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return result{}, "", fmt.Errorf("connectd did not count %d records in 10m", records)
}

// scrape returns the body of a /metrics page, or "" if it is not up yet.
func scrape(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// sumMetric adds the values of every series re matches (its first group).
func sumMetric(re *regexp.Regexp, body string) int64 {
	var total int64
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		f, _ := strconv.ParseFloat(m[1], 64)
		total += int64(f)
	}
	return total
}

// recordSizeOf reads the value size back from the topic name.
func recordSizeOf(topic string) int {
	parts := strings.Split(topic, "-")
	n, _ := strconv.Atoi(parts[len(parts)-2])
	return n
}

// procStats returns CPU seconds (user+system) and peak RSS (KiB) of a live
// process.
func procStats(pid int) (float64, int64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// Fields after the parenthesised command name; utime and stime are the
	// 14th and 15th fields overall.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
	f := strings.Fields(rest)
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	const clockTicks = 100 // USER_HZ on Linux
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	var rss int64
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			rss, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		}
	}
	return (utime + stime) / clockTicks, rss, nil
}

func maxRSSKiB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
