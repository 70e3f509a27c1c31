package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// Scenario "repartition": windows keyed by a field that is not the Kafka key
// (clicks keyed by user, counted per country in one-second event-time
// windows, exactly-once results), in one process against the two-stage
// repartition pattern of config/window_repartition.yaml and
// config/window_by_country.yaml (one process per stage, both running side by
// side), over the same input topic. A contender's time runs from its start
// until its windowing stage has received every input record
// (input_received of that process); CPU and peak RSS are summed over its
// processes. The two contenders alternate, each round on fresh groups and
// topics for its output (and repartition topic).

var repartitionRecords = flag.Int64("repartition-records", 400_000, "records through the repartition scenario")

const (
	repartitionUsers     = 10_000
	repartitionCountries = 50
)

func init() { register("repartition", repartitionScenario) }

// repartitionInput returns a topic of records clicks keyed by user over
// partitions partitions, timestamps 1ms apart per partition, reusing one from
// an earlier run.
func repartitionInput(ctx context.Context, brokers string, records int64, partitions int) (string, error) {
	topic := fmt.Sprintf("bench-clicks-%d-%d", records, partitions)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ProducerLinger(5*time.Millisecond),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if ends, err := adm.ListEndOffsets(ctx, topic); err == nil {
		var n int64
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
		if n == records {
			fmt.Fprintf(os.Stderr, "reusing %s\n", topic)
			return topic, nil
		}
		_, _ = adm.DeleteTopics(ctx, topic)
	}
	if err := recreateTopic(ctx, adm, topic, partitions); err != nil {
		return "", err
	}
	t0 := time.Now().Add(-time.Hour).Truncate(time.Hour)
	fmt.Fprintf(os.Stderr, "producing %d clicks to %s\n", records, topic)
	err = kafkatest.ProduceN(ctx, cl, records, func(i int64) *kgo.Record {
		p, n := i%int64(partitions), i/int64(partitions)
		user := fmt.Sprintf("u%05d", (i*7919)%repartitionUsers)
		v := fmt.Sprintf(`{"user":%q,"country":"c%02d","i":%d}`, user, (i*31)%repartitionCountries, i)
		return &kgo.Record{Topic: topic, Partition: int32(p), Key: []byte(user), Value: []byte(v),
			Timestamp: t0.Add(time.Duration(n) * time.Millisecond)}
	})
	return topic, err
}

// recreateTopic creates topic, retrying while the deletion of an earlier
// run's topic of that name completes.
func recreateTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int) error {
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, topic)
		if err == nil && resp.Err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("creating %s: %v %v", topic, err, resp.Err)
		}
		time.Sleep(500 * time.Millisecond) // the deletion of an earlier run's topic completes
	}
}

// singleWindowYAML is the one-process pipeline: the raw input windowed per
// country, exactly-once results.
func singleWindowYAML(brokers, in, out, id string, partitions int) string {
	return fmt.Sprintf(`
input:
  kafka_source:
    seed_brokers: [ %[1]q ]
    topics: [ %[2]q ]
    consumer_group: %[4]q
    start_from: earliest
    checkpoint_limit: 200000
    max_unacknowledged_bytes: 268435456
    readers: %[5]d
    watermark:
      max_out_of_orderness: 100ms
buffer:
  event_window:
    type: tumbling
    size: 1s
    key: ${! json("country") }
    aggregates:
      clicks: count
pipeline:
  threads: 1
output:
  kafka_sink:
    seed_brokers: [ %[1]q ]
    topic: %[3]q
    key: ${! @window_key }
    delivery_guarantee: exactly_once
    transactional_id_prefix: %[4]q
`, brokers, in, out, id, partitions)
}

var windowReceivedRe = regexp.MustCompile(`(?m)^input_received\{[^}]*\} ([0-9.e+]+)$`)

func repartitionScenario(ctx context.Context, e env) error {
	in, err := repartitionInput(ctx, e.brokers, *repartitionRecords, e.partitions)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.brokers))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	var single, two []result
	var loads []float64
	for round := range e.rounds {
		loads = append(loads, loadAverage1())
		id := fmt.Sprintf("bench-rp-%d", time.Now().UnixNano())
		out := id + "-out"
		if err := createTopic(ctx, e.brokers, out, 2); err != nil {
			return err
		}
		r, _, err := runConnectd(ctx, e.bin, singleWindowYAML(e.brokers, in, out, id+"-single", e.partitions), nil, windowReceivedRe, *repartitionRecords)
		if err != nil {
			return fmt.Errorf("round %d single process: %w", round+1, err)
		}
		single = append(single, r)
		fmt.Fprintf(os.Stderr, "repartition round %d single process: %.0f records/s\n", round+1, r.rps())

		rep := id + "-rep"
		if err := createTopic(ctx, e.brokers, rep, e.partitions); err != nil {
			return err
		}
		if err := createTopic(ctx, e.brokers, out+"2", 2); err != nil {
			return err
		}
		r, err = runTwoStage(ctx, e, root, in, rep, out+"2", id)
		if err != nil {
			return fmt.Errorf("round %d two stages: %w", round+1, err)
		}
		two = append(two, r)
		fmt.Fprintf(os.Stderr, "repartition round %d two stages: %.0f records/s\n", round+1, r.rps())
		_, _ = adm.DeleteTopics(ctx, out, rep, out+"2")
	}
	fmt.Printf("### Windows per country over input keyed by user: one process vs the repartition pattern\n\n")
	fmt.Printf("%s; %d clicks keyed by %d users over %d partitions, counted per country (%d countries) in 1s tumbling "+
		"event-time windows, exactly-once results; %d rounds, alternating; medians; load average (1 min) %s. "+
		"records/s: input records through the windowing stage, from the start of the contender's processes. The two-stage "+
		"row runs config/window_repartition.yaml and config/window_by_country.yaml, one process each, side by side; its "+
		"CPU and peak RSS are the sums over both.\n\n",
		time.Now().UTC().Format("2006-01-02"), *repartitionRecords, repartitionUsers, e.partitions, repartitionCountries,
		e.rounds, loadRange(loads))
	fmt.Printf("| pipeline | records/s | ratio | CPU s | CPU-s per M records | peak RSS MiB | per-round records/s |\n|---|---|---|---|---|---|---|\n")
	ms := median(single)
	for _, row := range []struct {
		name string
		rs   []result
	}{{"one process: kafka_source -> event_window (key from the value) -> kafka_sink", single},
		{"two stages: repartition by country (exactly-once) -> event_window on the Kafka key -> kafka_sink", two}} {
		m := median(row.rs)
		fmt.Printf("| %s | %.0f | %.2f | %.1f | %.2f | %.0f | %s |\n", row.name, m.rps(), m.rps()/ms.rps(), m.CPU,
			m.CPU/float64(m.Records)*1e6, float64(m.PeakRSS)/1024, rates(row.rs))
	}
	fmt.Println()
	return nil
}

// runTwoStage runs stage 1 in the background and stage 2 until it has
// received every record.
func runTwoStage(ctx context.Context, e env, root, in, rep, out, id string) (result, error) {
	common := []string{
		"CONNECTD_BROKERS=" + e.brokers, "CONNECTD_INSTANCE=0", "CONNECTD_MAX_OUT_OF_ORDERNESS=100ms",
		"CONNECTD_REPARTITION_TOPIC=" + rep,
	}
	stage1 := exec.CommandContext(ctx, e.bin, "run", filepath.Join(root, "config/window_repartition.yaml"))
	stage1.Env = append(append(os.Environ(), common...),
		"CONNECTD_REPARTITION_IN="+in, "CONNECTD_REPARTITION_GROUP="+id+"-s1", "CONNECTD_REPARTITION_TXN_PREFIX="+id+"-s1",
		"CONNECTD_COMMIT_INTERVAL=100ms")
	stage1.Stdout, stage1.Stderr = os.Stderr, os.Stderr
	if err := stage1.Start(); err != nil {
		return result{}, err
	}
	exited := make(chan struct{})
	go func() { _ = stage1.Wait(); close(exited) }()
	defer func() { _ = stage1.Process.Kill(); <-exited }()

	conf, err := os.ReadFile(filepath.Join(root, "config/window_by_country.yaml"))
	if err != nil {
		return result{}, err
	}
	// runConnectd adds its own http and logger sections.
	yaml := string(conf)
	for _, section := range []string{"http:\n  address: 127.0.0.1:${CONNECTD_HTTP_PORT:0}\n", "logger:\n  level: ${CONNECTD_LOG_LEVEL:warn}\n"} {
		if !strings.Contains(yaml, section) {
			return result{}, fmt.Errorf("config/window_by_country.yaml changed: no %q to replace", section)
		}
		yaml = strings.Replace(yaml, section, "", 1)
	}
	r, _, err := runConnectd(ctx, e.bin, yaml, append(common, "CONNECTD_WINDOW_GROUP="+id+"-s2", "CONNECTD_WINDOW_OUT_TOPIC="+out,
		"CONNECTD_WINDOW_TXN_PREFIX="+id+"-s2", "CONNECTD_WINDOW_SIZE=1s"), windowReceivedRe, *repartitionRecords)
	if err != nil {
		return result{}, err
	}
	if cpu, rss, err := procStats(stage1.Process.Pid); err == nil {
		r.CPU += cpu
		r.PeakRSS += rss
	}
	return r, nil
}
