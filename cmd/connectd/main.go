// Command connectd is a Benthos distribution with Kafka components modelled on
// Apache Flink's Kafka connector.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	"github.com/connectd/connectd/internal/devbroker"
	"github.com/connectd/connectd/internal/distribution"
	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/speclint"
	_ "github.com/connectd/connectd/plugins/bundle"
)

// Set with -ldflags "-X main.Version=... -X main.DateBuilt=...".
var (
	Version   = "dev"
	DateBuilt = "unknown"
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
	halt.SetProcessHook(func(error) { go signalUntilExit(syscall.SIGTERM) })
	// Components hear the signals Benthos shuts down on, and give up waits
	// that would hold the shutdown (an unreachable broker, open windows).
	halt.EndOnSignals(os.Interrupt, syscall.SIGTERM)
	// connectd's config checks: lint reports them, run stops on them.
	if distribution.WantsVersion(os.Args[1:]) {
		distribution.PrintVersion(os.Stdout, Version, DateBuilt)
		return
	}
	checks := speclint.NewCLI(os.Stderr)
	opts := append(distribution.Options(Version, DateBuilt),
		service.CLIOptCustomRunFlags(devbroker.Flags(), func(c *cli.Context) error {
			if err := checks.OnRunFlags(c); err != nil {
				return err
			}
			return devbroker.StartFromFlags(c, os.Stderr)
		}),
	)
	code, err := service.RunCLIToCode(context.Background(), opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err.Error())
	}
	if herr := halt.ProcessErr(); herr != nil {
		fmt.Fprintf(os.Stderr, "connectd: the run stopped: %v\n", herr)
		code = max(code, 1)
	}
	os.Exit(checks.ExitCode(code))
}

// signalUntilExit sends sig to this process every second until it exits.
// Benthos listens for its shutdown signals only once the stream runs: a
// component that stops the run while it connects, before that (a TLS
// certificate or a login refused at once), would otherwise send the one
// signal to nobody, and the process would wait forever. Later copies are
// dropped: Benthos shuts down on the first.
func signalUntilExit(sig syscall.Signal) {
	for {
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second)
	}
}
