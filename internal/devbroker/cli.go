package devbroker

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"
)

// Flag names of the run-style subcommands.
const (
	flagAddr   = "dev-broker"
	flagTopics = "dev-broker-topics"
)

// Flags returns the CLI flags that start a development broker before a run.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{
			Name:    flagAddr,
			EnvVars: []string{"CONNECTD_DEV_BROKER"},
			Usage: "start an in-process DEVELOPMENT Kafka broker (franz-go kfake) on 127.0.0.1:PORT before running; " +
				"data is in memory and lost on exit: not for production",
		},
		&cli.StringSliceFlag{
			Name:    flagTopics,
			EnvVars: []string{"CONNECTD_DEV_BROKER_TOPICS"},
			Usage:   "topics (4 partitions each) that the development broker creates at start; others are created on first use",
		},
	}
}

// StartFromFlags starts the development broker if the flags of c ask for
// one, and announces it on out. The broker lives as long as the process.
func StartFromFlags(c *cli.Context, out io.Writer) error {
	addr := c.String(flagAddr)
	if addr == "" {
		return nil
	}
	port, err := ParseAddr(addr)
	if err != nil {
		return fmt.Errorf("--%s: %w", flagAddr, err)
	}
	b, err := Start(Config{Port: port, Partitions: 4, Topics: c.StringSlice(flagTopics)})
	if err != nil {
		return fmt.Errorf("--%s: %w", flagAddr, err)
	}
	fmt.Fprintf(out, "connectd: development broker (not for production) listening on %v\n", b.Addrs())
	return nil
}
