package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure" // drop output
	"github.com/redpanda-data/benthos/v4/public/service"
)

// The Benthos floor: what a Benthos pipeline costs per message with no Kafka
// at all. A generator input hands out batches of prebuilt-size messages with
// the eight metadata values kafka_source sets by default, into drop. No
// input can be faster than this through Benthos, so it bounds what
// kafka_source -> drop can reach against the raw client.

func init() {
	modes["benthos-floor"] = func(ctx context.Context, args []string) error {
		fs := flag.NewFlagSet("benthos-floor", flag.ContinueOnError)
		records := fs.Int64("records", 1_000_000, "messages")
		size := fs.Int("size", 200, "message size in bytes")
		cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
		if err := fs.Parse(args); err != nil {
			return err
		}
		debug.SetGCPercent(400) // as connectd's main does
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		r, err := benthosFloor(ctx, *records, *size)
		if err != nil {
			return err
		}
		return jsonOut(r)
	}
}

func runFloor(self string, records int64, size int) (result, error) {
	var r result
	err := runMode(self, &r, &r, "-mode", "benthos-floor", "--", "-records", fmt.Sprint(records), "-size", fmt.Sprint(size))
	return r, err
}

type floorInput struct {
	left    int64
	size    int
	offset  int64
	payload []byte
}

func (g *floorInput) Connect(context.Context) error { return nil }

func (g *floorInput) ReadBatch(context.Context) (service.MessageBatch, service.AckFunc, error) {
	if g.left <= 0 {
		return nil, nil, service.ErrEndOfInput
	}
	n := min(g.left, 1024)
	g.left -= n
	b := make(service.MessageBatch, n)
	now := time.Now()
	for i := range b {
		value := make([]byte, g.size) // a fetched record's value is fresh memory too
		copy(value, g.payload)
		m := service.NewMessage(value)
		m.MetaSetMut("kafka_key", "")
		m.MetaSetMut("kafka_topic", "bench")
		m.MetaSetMut("kafka_partition", int(g.offset%8))
		m.MetaSetMut("kafka_offset", g.offset)
		m.MetaSetMut("kafka_timestamp_ms", now.UnixMilli())
		m.MetaSetMut("kafka_timestamp_unix", now.Unix())
		m.MetaSetMut("kafka_tombstone_message", false)
		m.MetaSetMut("kafka_lag", g.left)
		g.offset++
		b[i] = m
	}
	return b, func(context.Context, error) error { return nil }, nil
}

func (g *floorInput) Close(context.Context) error { return nil }

func benthosFloor(ctx context.Context, records int64, size int) (result, error) {
	env := service.NewEnvironment()
	err := env.RegisterBatchInput("bench_floor", service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.BatchInput, error) {
			return &floorInput{left: records, size: size, payload: make([]byte, size)}, nil
		})
	if err != nil {
		return result{}, err
	}
	sb := env.NewStreamBuilder()
	if err := sb.SetYAML("input:\n  bench_floor: {}\noutput:\n  drop: {}\nlogger:\n  level: warn\nmetrics:\n  none: {}\n"); err != nil {
		return result{}, err
	}
	stream, err := sb.Build()
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	if err := stream.Run(ctx); err != nil {
		return result{}, err
	}
	return result{Records: records, Bytes: records * int64(size), Wall: time.Since(start).Seconds()}, nil
}
