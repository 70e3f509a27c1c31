// Command connectd is a Benthos distribution with Kafka components modelled on
// Apache Flink's Kafka connector.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	"github.com/connectd/connectd/internal/devbroker"
	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/speclint"
	_ "github.com/connectd/connectd/plugins/bundle"
)

// Set with -ldflags "-X main.Version=... -X main.DateBuilt=...".
var (
	Version   = "dev"
	DateBuilt = "unknown"
)

const (
	flagDevBroker       = "dev-broker"
	flagDevBrokerTopics = "dev-broker-topics"
)

// defaultGCPercent replaces Go's GOGC default of 100 unless GOGC is set. A
// pipeline allocates a few small objects per record (Benthos messages and
// their metadata) that die within one batch, so the live heap is small and a
// collection every 100 % of it runs far more often than the memory saved is
// worth: 400 cut CPU per record measurably in `make bench` (docs/benchmarks.md)
// for a peak heap of about five times the live one. GOMEMLIMIT still applies.
const defaultGCPercent = 400

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
	// A component that cannot go on (internal/halt) asks for Benthos's
	// graceful shutdown, in which outputs abort their open transactions; the
	// run then exits 1 with the error.
	halt.SetProcessHook(func(error) { _ = syscall.Kill(os.Getpid(), syscall.SIGTERM) })
	// Components hear the signals Benthos shuts down on, and give up waits
	// that would hold the shutdown (an unreachable broker, open windows).
	halt.EndOnSignals(os.Interrupt, syscall.SIGTERM)
	code, err := service.RunCLIToCode(context.Background(),
		service.CLIOptSetBinaryName("connectd"),
		service.CLIOptSetProductName("connectd"),
		service.CLIOptSetVersion(Version, DateBuilt),
		service.CLIOptSetDocumentationURL("https://github.com/connectd/connectd"),
		service.CLIOptCustomRunFlags([]cli.Flag{
			&cli.StringFlag{
				Name:    flagDevBroker,
				EnvVars: []string{"CONNECTD_DEV_BROKER"},
				Usage: "start an in-process DEVELOPMENT Kafka broker (franz-go kfake) on 127.0.0.1:PORT before running; " +
					"data is in memory and lost on exit: not for production",
			},
			&cli.StringSliceFlag{
				Name:    flagDevBrokerTopics,
				EnvVars: []string{"CONNECTD_DEV_BROKER_TOPICS"},
				Usage:   "topics (4 partitions each) that the development broker creates at start; others are created on first use",
			},
		}, onRunFlags),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, err.Error())
	}
	if herr := halt.ProcessErr(); herr != nil {
		fmt.Fprintf(os.Stderr, "connectd: the run stopped: %v\n", herr)
		code = max(code, 1)
	}
	os.Exit(code)
}

// onRunFlags runs when the run-style subcommands (run, streams, lint, echo,
// test) have parsed their flags.
func onRunFlags(c *cli.Context) error {
	if c.Command != nil && c.Command.Name == "lint" {
		// Benthos's lint skips a component whose scalar fields do not
		// decode; type-check connectd's components first.
		if err := speclint.CheckFiles(c.Args().Slice()); err != nil {
			return fmt.Errorf("lint: wrong field types or combinations:\n%w", err)
		}
	}
	return startDevBroker(c)
}

// startDevBroker starts the development broker if asked to. The broker lives
// as long as the process.
func startDevBroker(c *cli.Context) error {
	addr := c.String(flagDevBroker)
	if addr == "" {
		return nil
	}
	port, err := devbroker.ParseAddr(addr)
	if err != nil {
		return fmt.Errorf("--%s: %w", flagDevBroker, err)
	}
	b, err := devbroker.Start(devbroker.Config{Port: port, Partitions: 4, Topics: c.StringSlice(flagDevBrokerTopics)})
	if err != nil {
		return fmt.Errorf("--%s: %w", flagDevBroker, err)
	}
	fmt.Fprintf(os.Stderr, "connectd: development broker (not for production) listening on %v\n", b.Addrs())
	return nil
}
