package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Scenario "partitions10k": one connectd process reading 10,000 partitions
// (100 topics of 100 partitions, subscribed by topic_pattern), in
// enumerator mode as a bounded read that must exit 0 with every record
// committed, and in group mode until every record was counted. It reports
// start-up time, wall time, CPU, peak RSS (and RSS per partition against
// the same records over 8 partitions), the /metrics page with per-partition
// labels and with per-topic ones, and the source's offset commits (their
// count, partitions and latency, from kafka_source_commit_latency_ns).

var (
	manyTopics     = flag.Int("many-topics", 100, "topics in the partitions10k scenario")
	manyPartitions = flag.Int("many-partitions", 100, "partitions per topic in the partitions10k scenario")
	manyRecords    = flag.Int64("many-records", 1_000_000, "records over all partitions in the partitions10k scenario")
	manyKeep       = flag.Bool("many-keep", false, "keep the partitions10k topics (and the private broker) for the next run")
	manyBroker     = flag.String("many-broker", "", "broker of the partitions10k scenario; empty: a private one started with scripts/kafka.sh on -many-port-base")
	manyPortBase   = flag.Int("many-port-base", 19392, "first port of the partitions10k scenario's private broker")
	manyDebug      = flag.Bool("many-debug", false, "serve /debug/pprof on each partitions10k run's http address (its port is in the run's log with -many-logs)")
	manyData       = flag.String("many-data", "", "data dir of the partitions10k scenario's private broker; empty: "+manyDataDefault+" (tmpfs) if there is a /dev/shm, else /tmp/connectd-kafka-bench-many")
	manyLogs       = flag.String("many-logs", "", "directory for the whole log of each partitions10k run (round-R-C.log, C the contender's row); none if empty")
)

// manyDataDefault is where the private broker keeps its data: in memory.
// On disk, the first fetches of a freshly filled set of 10,000 partitions
// were never answered on the shared box: the kernel had evicted the files
// the broker had just written (fincore: 0 pages of a partition's log and
// index, minutes after the fill; the box's page cache refaults all the
// time), so a fetch touching every partition made thousands of synchronous
// disk reads in one request handler (major faults on the mmapped offset
// indexes, about 580 a second, the broker at 95% system CPU), longer than
// the client's request timeout (fetch_max_wait + request_timeout_overhead,
// 10.5s): the client dropped the connection and sent the fetch again while
// the broker went on with the abandoned ones, and no record was read in
// over 3 minutes. What
// the scenario measures is connectd against a broker serving recent data
// from memory, as a broker's page cache does where it is not starved.
const manyDataDefault = "/dev/shm/connectd-kafka-bench-many"

// manyDataDir is the private broker's data dir (-many-data).
func manyDataDir() string {
	if *manyData != "" {
		return *manyData
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return manyDataDefault
	}
	return "/tmp/connectd-kafka-bench-many"
}

// logRun is a connectd process whose log lines are watched.
type logRun struct {
	start time.Time
	mu    sync.Mutex
	// first[i] is when a line matching watch[i] first arrived.
	watch []*regexp.Regexp
	first []time.Duration
	tail  []string
	// all, if not nil, gets every line, stamped with its time since start.
	all io.Writer
}

func (l *logRun) scan(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		at := time.Since(l.start)
		if l.all != nil {
			fmt.Fprintf(l.all, "%8.3f %s\n", at.Seconds(), line)
		}
		l.mu.Lock()
		for i, re := range l.watch {
			if l.first[i] == 0 && re.MatchString(line) {
				l.first[i] = at
			}
		}
		if len(line) > 400 {
			line = line[:400] + "..."
		}
		l.tail = append(l.tail, line)
		if len(l.tail) > 40 {
			l.tail = l.tail[1:]
		}
		l.mu.Unlock()
	}
}

// runWatched is the figures of one run.
type runWatched struct {
	result
	// lines[i] is when watch[i] first matched a log line, 0 if never.
	lines []time.Duration
	// page is the last /metrics page scraped.
	page string
	// idleCPU is the CPU share (1 = one core) over the idle window, and
	// rss the resident set at its end, in KiB (idle runs).
	idleCPU float64
	rss     int64
}

// watchOpts says when a watched run ends.
type watchOpts struct {
	// watch are the log lines whose first time is reported.
	watch []*regexp.Regexp
	// until: the run ends once the series it matches at /metrics sum to
	// at least records; nil (and idle 0): it ends on its own, exit 0.
	until   *regexp.Regexp
	records int64
	// idle: the run ends idle after watch[0] first matched, and its CPU
	// share is measured over the second half of that time.
	idle time.Duration
	// log, if not nil, gets every line of the run's log.
	log io.Writer
}

// runConnectdWatched runs connectd with yaml (its http and logger sections
// are added) until o says it is over; /metrics is scraped every second.
func runConnectdWatched(ctx context.Context, bin, yaml string, o watchOpts) (runWatched, error) {
	port, err := freePort()
	if err != nil {
		return runWatched{}, err
	}
	dir, err := os.MkdirTemp("", "connectd-bench")
	if err != nil {
		return runWatched{}, err
	}
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "pipeline.yaml")
	yaml = fmt.Sprintf("http:\n  address: 127.0.0.1:%d\n  debug_endpoints: %v\nlogger:\n  level: info\n%s", port, *manyDebug, yaml)
	if err := os.WriteFile(conf, []byte(yaml), 0o644); err != nil {
		return runWatched{}, err
	}
	l := &logRun{watch: o.watch, first: make([]time.Duration, len(o.watch)), all: o.log}
	cmd := exec.CommandContext(ctx, bin, "run", conf)
	// Benthos logs to stdout, panics go to stderr: both are watched.
	pr, pw, err := os.Pipe()
	if err != nil {
		return runWatched{}, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	l.start = time.Now()
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return runWatched{}, err
	}
	scanned := make(chan struct{})
	go func() { l.scan(pr); pr.Close(); close(scanned) }()
	peak := watchPeakRSS(cmd.Process.Pid)
	exited := make(chan error, 1)
	go func() { <-scanned; peak.stop(); exited <- cmd.Wait() }()
	fail := func(err error) (runWatched, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		return runWatched{}, fmt.Errorf("%w; last log lines:\n%s", err, joinLines(l.tail))
	}
	lines := func() []time.Duration {
		l.mu.Lock()
		defer l.mu.Unlock()
		return slicesClone(l.first)
	}
	// stop ends a run that does not end on its own: it takes the
	// process's figures, then SIGTERM, which must exit 0.
	var out runWatched
	stop := func() (runWatched, error) {
		out.Wall = time.Since(l.start).Seconds()
		cpu, rss, err := procStats(cmd.Process.Pid)
		if err != nil {
			return runWatched{}, err
		}
		out.CPU, out.PeakRSS = cpu, rss
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			return fail(fmt.Errorf("connectd after SIGTERM: %w", err))
		}
		out.lines = lines()
		return out, nil
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	deadline := time.After(15 * time.Minute)
	var idleFrom time.Time
	var idleCPU float64
	for {
		select {
		case err := <-exited:
			out.Wall = time.Since(l.start).Seconds()
			if o.until != nil || o.idle > 0 {
				return fail(fmt.Errorf("connectd exited early: %v", err))
			}
			if err != nil {
				return fail(fmt.Errorf("connectd: %w (want exit 0 at the end of input)", err))
			}
			ps := cmd.ProcessState
			out.CPU = ps.UserTime().Seconds() + ps.SystemTime().Seconds()
			out.PeakRSS = peak.last()
			out.lines = lines()
			return out, nil
		case <-tick.C:
			body := scrape(url)
			if body != "" {
				out.page = body
			}
			switch {
			case o.until != nil:
				if n := sumMetric(o.until, body); n >= o.records {
					out.Records = n
					return stop()
				}
			case o.idle > 0:
				at := lines()[0]
				if at == 0 {
					continue
				}
				since := time.Since(l.start) - at
				if idleFrom.IsZero() && since >= o.idle/2 {
					idleFrom = time.Now()
					if idleCPU, _, err = procStats(cmd.Process.Pid); err != nil {
						return runWatched{}, err
					}
				}
				if since >= o.idle {
					cpu, _, err := procStats(cmd.Process.Pid)
					if err != nil {
						return runWatched{}, err
					}
					out.idleCPU = (cpu - idleCPU) / time.Since(idleFrom).Seconds()
					if out.rss, err = currentRSS(cmd.Process.Pid); err != nil {
						return runWatched{}, err
					}
					return stop()
				}
			}
		case <-deadline:
			_ = cmd.Process.Kill()
			<-exited
			return fail(errors.New("connectd did not finish in 15m"))
		}
	}
}

// peakRSS follows a process's peak resident set (VmHWM in
// /proc/<pid>/status), KiB, while it runs. The rusage of the exited child
// (ProcessState's ru_maxrss) cannot stand for it: Go starts a child with
// clone(CLONE_VM|CLONE_VFORK), so until its exec the child runs on the
// bench's own memory map, and Linux carries that map's peak into the
// child's ru_maxrss at exec. Every bounded run then reported the bench's
// peak (803 MiB after it produced the topic set) rather than connectd's.
type peakRSS struct {
	kib  atomic.Int64
	quit chan struct{}
	done chan struct{}
}

// peakRSSPoll is how often watchPeakRSS reads VmHWM: growth in the last
// poll interval before the process exits is not seen.
const peakRSSPoll = 50 * time.Millisecond

// watchPeakRSS reads pid's VmHWM every peakRSSPoll until stop.
func watchPeakRSS(pid int) *peakRSS {
	p := &peakRSS{quit: make(chan struct{}), done: make(chan struct{})}
	read := func() {
		if _, rss, err := procStats(pid); err == nil && rss > p.kib.Load() {
			p.kib.Store(rss)
		}
	}
	read()
	go func() {
		defer close(p.done)
		t := time.NewTicker(peakRSSPoll)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return p
}

// stop ends the polling; it returns once no read is under way, so that the
// process can be reaped (and its pid reused) after it.
func (p *peakRSS) stop() {
	close(p.quit)
	<-p.done
}

// last is the highest VmHWM read.
func (p *peakRSS) last() int64 { return p.kib.Load() }

// currentRSS is a live process's resident set (VmRSS), KiB.
func currentRSS(pid int) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		}
	}
	return 0, errors.New("no VmRSS")
}

func slicesClone(d []time.Duration) []time.Duration { return append([]time.Duration(nil), d...) }

func joinLines(ls []string) string {
	s := ""
	for _, l := range ls {
		s += l + "\n"
	}
	return s
}

func init() { register("partitions10k", partitionsScenario) }

var (
	// connectedRe is the enumerator's start-up line: every partition
	// listed, its offsets resolved, and handed to the readers.
	connectedRe = regexp.MustCompile(`kafka_source: reading [0-9]+ partitions`)
	// assignedRe is a group member's assignment line.
	assignedRe        = regexp.MustCompile(`kafka_source: reader [0-9]+ was assigned `)
	sourceReceivedRe  = regexp.MustCompile(`(?m)^kafka_source_records_received\{[^}]*\} ([0-9.e+]+)$`)
	commitCountRe     = regexp.MustCompile(`(?m)^kafka_source_commit_latency_ns_count(?:\{[^}]*\})? ([0-9.e+]+)$`)
	commitQuantileRe  = regexp.MustCompile(`(?m)^kafka_source_commit_latency_ns\{[^}]*quantile="(0\.5|0\.99)"[^}]*\} ([0-9.e+]+)$`)
	partitionLabelRe  = regexp.MustCompile(`(?m)^kafka_source_[a-z_]+\{[^}]*partition="`)
	metricSeriesRe    = regexp.MustCompile(`(?m)^[a-z_]+(\{[^}]*\})? `)
	kafkaSourceLineRe = regexp.MustCompile(`(?m)^kafka_source_`)
)

// manyContender is one run of the partitions10k scenario.
type manyContender struct {
	name string
	// group: assignment: group, run until every record was counted;
	// else a bounded enumerator read that exits on its own.
	group bool
	// metrics is partition_metrics.
	metrics string
	// small: one topic of 8 partitions with the same records instead.
	small bool
	// idle: nothing to read (start_from: latest, unbounded, discovery
	// every second); measured manyIdle after start-up.
	idle bool
}

// manyIdle is how long an idle run lasts after start-up; its CPU share is
// measured over the second half.
const manyIdle = 20 * time.Second

var manyContenders = []manyContender{
	{name: "enumerator, bounded (stop_at: latest), partition_metrics: topic", metrics: "topic"},
	{name: "enumerator, bounded, partition_metrics: partition (default)", metrics: "partition"},
	{name: "group (assignment: group) until every record is counted, partition_metrics: topic", group: true, metrics: "topic"},
	{name: "baseline: the same records over 1 topic of 8 partitions, enumerator, bounded", metrics: "partition", small: true},
	{name: "idle: the topic set, nothing to read, discovery every 1s, partition_metrics: partition", metrics: "partition", idle: true},
	{name: "idle: the topic set, as above, partition_metrics: topic", metrics: "topic", idle: true},
	{name: "idle baseline: 8 partitions, as above, partition_metrics: partition", metrics: "partition", idle: true, small: true},
}

// manyResult is one run's figures.
type manyResult struct {
	runWatched
	startup     time.Duration // to the connected (enumerator) or the assignment line (group)
	metricsSize int           // bytes of the last /metrics page
	series      int           // series on it
	sourceLines int           // kafka_source_* series
	partLabeled int           // kafka_source_* series with a partition label
	commits     int64         // offset commits of the source's own
	commitP50   float64       // their latency, ms
	commitP99   float64
}

func partitionsScenario(ctx context.Context, e env) error {
	if e.brokers = *manyBroker; e.brokers == "" {
		brokers, stop, err := privateBroker(ctx, *manyPortBase, manyDataDir())
		if err != nil {
			return err
		}
		if !*manyKeep {
			defer stop()
		}
		e.brokers = brokers
	}
	s := topicSet{prefix: fmt.Sprintf("bench-many-%d-%d", *manyRecords, e.size), topics: *manyTopics, partitions: *manyPartitions, records: *manyRecords}
	created, filled, err := ensureTopicSet(ctx, e.brokers, s, e.size)
	if err != nil {
		return err
	}
	if !*manyKeep && *manyBroker != "" {
		defer deleteTopicSet(context.Background(), e.brokers, s)
	}
	small, err := ensureTopic(ctx, e.brokers, s.records, e.size, 8)
	if err != nil {
		return err
	}
	probe, err := probeCommitAndDiscovery(ctx, e.brokers, s)
	if err != nil {
		return err
	}
	results := make([][]manyResult, len(manyContenders))
	for round := range e.rounds {
		order := make([]int, len(manyContenders))
		for i := range order {
			order[i] = i
			if round%2 == 1 {
				order[i] = len(order) - 1 - i
			}
		}
		for _, i := range order {
			c := manyContenders[i]
			r, err := runMany(ctx, e, s, small, c, round, i)
			if err != nil {
				return fmt.Errorf("round %d %s: %w", round+1, c.name, err)
			}
			results[i] = append(results[i], r)
			fmt.Fprintf(os.Stderr, "round %d %s: %.1f s, start-up %v, CPU %.1f s, peak %.0f MiB, /metrics %d KiB, load %s\n", round+1, c.name,
				r.Wall, r.startup.Round(time.Millisecond), r.CPU, float64(r.PeakRSS)/1024, r.metricsSize/1024, loadAvg())
		}
	}
	fmt.Printf("### 10,000 partitions on one process\n\n")
	fmt.Printf("%s; %d records of %d bytes over %d topics of %d partitions (%d partitions, %d records each), subscribed by "+
		"`topic_pattern`, output `drop`; %d rounds each, alternating; medians (by wall time). The topics were created in %v "+
		"(CreateTopics requests of at most 5,000 partitions) and filled in %v (0s: reused). Start-up: process start to the "+
		"enumerator's `reading N partitions` line (every partition listed, its offsets resolved, handed to the reader), or to "+
		"the group member's assignment line. Commits: the source's own offset commits and their latency "+
		"(`kafka_source_commit_latency_ns`).\n\n",
		time.Now().UTC().Format("2006-01-02"), s.records, e.size, s.topics, s.partitions, s.total(), s.records/int64(s.total()),
		e.rounds, created.Round(time.Second), filled.Round(time.Second))
	fmt.Printf("| catch-up run | wall s | records/s | start-up s | CPU s | peak RSS MiB | /metrics KiB | series (kafka_source_*, with a partition label) | commits | commit p50 / p99 ms | per-round wall s |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, c := range manyContenders {
		if c.idle {
			continue
		}
		m := medianMany(results[i])
		page := fmt.Sprintf("%d | %d (%d, %d) | %d | %.0f / %.0f", m.metricsSize/1024, m.series, m.sourceLines, m.partLabeled,
			m.commits, m.commitP50, m.commitP99)
		if m.page == "" {
			// It ended before the first scrape, a second after its start.
			page = "- | - | - | -"
		}
		fmt.Printf("| %s | %.1f | %.0f | %.2f | %.1f | %.0f | %s | %s |\n", c.name, m.Wall, float64(s.records)/m.Wall,
			m.startup.Seconds(), m.CPU, float64(m.PeakRSS)/1024, page, walls(results[i]))
	}
	fmt.Println()
	var base manyResult
	for i, c := range manyContenders {
		if c.idle && c.small {
			base = medianMany(results[i])
		}
	}
	fmt.Printf("Idle: nothing to read (`start_from: latest`, unbounded), partition discovery every second (`discovery_interval: 1s`); "+
		"%v after start-up, the resident set, and the CPU share over its second half. RSS per partition: (RSS - the "+
		"8-partition baseline's) / (%d - 8).\n\n", manyIdle, s.total())
	fmt.Printf("| idle run | start-up s | RSS MiB | RSS per partition KiB | idle CPU %% of a core | /metrics KiB | series (kafka_source_*, with a partition label) |\n|---|---|---|---|---|---|---|\n")
	for i, c := range manyContenders {
		if !c.idle {
			continue
		}
		m := medianMany(results[i])
		perPart := "-"
		if !c.small {
			perPart = fmt.Sprintf("%.1f", float64(m.rss-base.rss)/float64(s.total()-8))
		}
		fmt.Printf("| %s | %.2f | %.0f | %s | %.1f | %d | %d (%d, %d) |\n", c.name, m.startup.Seconds(), float64(m.rss)/1024, perPart,
			100*m.idleCPU, m.metricsSize/1024, m.series, m.sourceLines, m.partLabeled)
	}
	fmt.Println()
	fmt.Printf("Measured by the bench against the same broker (medians of %d): an offset commit of all %d partitions "+
		"(kadm CommitOffsets, as the enumerator commits, in requests of at most 512 KiB of records as kafka_source splits "+
		"them) takes %d requests, %.0f KiB in all, and %.0f ms; a discovery round's metadata request for every topic "+
		"(kadm ListTopics, as partition discovery lists them) gets a %.0f KiB answer in %.0f ms.\n\n", probe.n, s.total(),
		probe.commitRequests, float64(probe.commitBytes)/1024, probe.commitMs, float64(probe.metadataBytes)/1024, probe.metadataMs)
	return nil
}

func walls(rs []manyResult) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%.1f", r.Wall))
	}
	return strings.Join(out, ", ")
}

func medianMany(rs []manyResult) manyResult {
	s := append([]manyResult(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].Wall < s[j].Wall })
	return s[len(s)/2]
}

// runMany runs contender c (row i) once, in round.
func runMany(ctx context.Context, e env, s topicSet, small string, c manyContender, round, i int) (manyResult, error) {
	group := fmt.Sprintf("bench-many-%d", time.Now().UnixNano())
	sub := fmt.Sprintf("topic_pattern: %q", s.pattern())
	if c.small {
		sub = fmt.Sprintf("topics: [ %q ]", small)
	}
	mode := "    start_from: earliest\n    stop_at: latest\n"
	switch {
	case c.group:
		mode = "    assignment: group\n    committed_fallback: earliest\n"
	case c.idle:
		mode = "    start_from: latest\n    discovery_interval: 1s\n"
	}
	yaml := fmt.Sprintf(`
input:
  kafka_source:
    seed_brokers: [ %q ]
    %s
    consumer_group: %q
    partition_metrics: %s
%soutput:
  drop: {}
`, e.brokers, sub, group, c.metrics, mode)
	o := watchOpts{watch: []*regexp.Regexp{connectedRe}}
	switch {
	case c.group:
		o = watchOpts{watch: []*regexp.Regexp{assignedRe}, until: sourceReceivedRe, records: s.records}
	case c.idle:
		o.idle = manyIdle
	}
	if *manyLogs != "" {
		f, err := os.Create(filepath.Join(*manyLogs, fmt.Sprintf("round-%d-%d.log", round+1, i)))
		if err != nil {
			return manyResult{}, err
		}
		defer f.Close()
		o.log = f
	}
	r, err := runConnectdWatched(ctx, e.bin, yaml, o)
	if err != nil {
		return manyResult{}, err
	}
	topics := s.names()
	if c.small {
		topics = []string{small}
	}
	if !c.group && !c.idle {
		// A bounded read committed the end of every partition.
		if err := checkCommittedEnds(ctx, e.brokers, group, topics, s.records); err != nil {
			return manyResult{}, err
		}
		r.Records = s.records
	}
	deleteGroup(ctx, e.brokers, group, topics)
	out := manyResult{runWatched: r, startup: r.lines[0], metricsSize: len(r.page)}
	out.series = len(metricSeriesRe.FindAllString(r.page, -1))
	out.sourceLines = len(kafkaSourceLineRe.FindAllString(r.page, -1))
	out.partLabeled = len(partitionLabelRe.FindAllString(r.page, -1))
	out.commits = sumMetric(commitCountRe, r.page)
	for _, m := range commitQuantileRe.FindAllStringSubmatch(r.page, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		if m[1] == "0.5" {
			out.commitP50 = v / 1e6
		} else {
			out.commitP99 = v / 1e6
		}
	}
	return out, nil
}

// checkCommittedEnds checks that group committed the end offset of every
// partition of topics, and that those add up to records.
func checkCommittedEnds(ctx context.Context, brokers, group string, topics []string, records int64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return err
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return err
	}
	var sum int64
	var errs []error
	ends.Each(func(o kadm.ListedOffset) {
		c, ok := committed.Lookup(o.Topic, o.Partition)
		if !ok || c.At != o.Offset {
			errs = append(errs, fmt.Errorf("topic %s partition %d: committed %d, want the end offset %d", o.Topic, o.Partition, c.At, o.Offset))
		}
		sum += c.At
	})
	if len(errs) > 0 {
		return fmt.Errorf("%d partitions not committed at their end: %w", len(errs), errs[0])
	}
	if sum != records {
		return fmt.Errorf("committed offsets add up to %d, want %d", sum, records)
	}
	return nil
}

// deleteGroup deletes a run's group, so that the broker does not keep the
// offsets of every run in memory (a broker with a 512 MiB heap ran out of
// it after some twenty runs of 10,000 partitions). Its offsets go first, a
// topic at a time: deleting the group writes a tombstone per offset in one
// batch, over message.max.bytes at 10,000 partitions.
func deleteGroup(ctx context.Context, brokers, group string, topics []string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	td, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return
	}
	for _, t := range td {
		s := make(kadm.TopicsSet)
		for p := range t.Partitions {
			s.Add(t.Topic, p)
		}
		_, _ = adm.DeleteOffsets(ctx, group, s)
	}
	_, _ = adm.DeleteGroup(ctx, group)
}

// probe is an offset commit and a discovery listing of the whole set, as
// connectd makes them, measured on the wire.
type probe struct {
	n, commitRequests          int
	commitBytes, metadataBytes int
	commitMs, metadataMs       float64
}

// probeCommitAndDiscovery commits an offset for every partition of the set
// to a throwaway group (kadm CommitOffsets, as the enumerator commits) and
// lists every topic (kadm ListTopics, as partition discovery does), five
// times each, recording the bytes of the request (commit) and of the answer
// (metadata) with kgo hooks and the medians of their times.
func probeCommitAndDiscovery(ctx context.Context, brokers string, s topicSet) (probe, error) {
	h := &wireHook{}
	// Metadata no older than 10ms: every listing goes to the broker, as
	// a discovery round every discovery_interval does.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.WithHooks(h), kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		return probe{}, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.ListTopics(ctx); err != nil { // connect and warm up
		return probe{}, err
	}
	group := fmt.Sprintf("bench-many-probe-%d", time.Now().UnixNano())
	// In requests of at most 512 KiB of estimated records, as
	// kafka_source splits them (commitChunkBytes): one request for all
	// 10,000 is over the broker's message.max.bytes.
	var chunks []kadm.Offsets
	size := 0
	for i := range s.topics {
		for p := range s.partitions {
			n := 64 + len(group) + len(s.name(i))
			if len(chunks) == 0 || size+n > 512<<10 {
				chunks, size = append(chunks, make(kadm.Offsets)), 0
			}
			chunks[len(chunks)-1].Add(kadm.Offset{Topic: s.name(i), Partition: int32(p), At: 1, LeaderEpoch: -1})
			size += n
		}
	}
	const n = 5
	var commits, lists []float64
	out := probe{n: n, commitRequests: len(chunks)}
	for range n {
		h.reset()
		start := time.Now()
		for _, c := range chunks {
			resp, err := adm.CommitOffsets(ctx, group, c)
			if err == nil {
				err = resp.Error()
			}
			if err != nil {
				return probe{}, fmt.Errorf("committing %d offsets: %w", s.total(), err)
			}
		}
		commits = append(commits, float64(time.Since(start).Microseconds())/1000)
		out.commitBytes = h.written(kmsg.OffsetCommit)
		h.reset()
		start = time.Now()
		if _, err := adm.ListTopics(ctx); err != nil {
			return probe{}, err
		}
		lists = append(lists, float64(time.Since(start).Microseconds())/1000)
		out.metadataBytes = h.read(kmsg.Metadata)
	}
	deleteGroup(ctx, brokers, group, s.names())
	sort.Float64s(commits)
	sort.Float64s(lists)
	out.commitMs, out.metadataMs = commits[n/2], lists[n/2]
	return out, nil
}

// wireHook adds up the bytes written and read per request key.
type wireHook struct {
	mu   sync.Mutex
	w, r map[int16]int
}

func (h *wireHook) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.w, h.r = map[int16]int{}, map[int16]int{}
}

func (h *wireHook) written(k kmsg.Key) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.w[int16(k)]
}

func (h *wireHook) read(k kmsg.Key) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.r[int16(k)]
}

func (h *wireHook) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, bytes int, _, _ time.Duration, _ error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w != nil {
		h.w[key] += bytes
	}
}

func (h *wireHook) OnBrokerRead(_ kgo.BrokerMetadata, key int16, bytes int, _, _ time.Duration, _ error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.r != nil {
		h.r[key] += bytes
	}
}
