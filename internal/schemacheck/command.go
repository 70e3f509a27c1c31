package schemacheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/connectd/connectd/schema/compat"
)

// Command is the `schema-check` subcommand.
func Command() *cli.Command {
	return &cli.Command{
		Name:      "schema-check",
		Usage:     "Check the avro-confluent tables of configs or DDL files against their schema registry subjects' compatibility levels",
		ArgsUsage: "FILE...",
		Description: `For every table with format (or key.format) 'avro-confluent' in the given connectd
configs (.yaml: the ddl, catalog and table fields of their components) or Flink DDL files
(.sql), derives the Avro schema that writing its rows registers, reads the subject's
compatibility level and registered versions from the registry, and checks the schema
locally (BACKWARD, FORWARD, FULL and their _TRANSITIVE forms, NONE). An incompatible
schema names the field that breaks it. Exit status 1 if any schema is incompatible or
cannot be checked.

At run time kafka_sink and table_encode ask the registry's own compatibility endpoint
before they register, and end the run on an incompatible schema.

  connectd schema-check config/pipeline.yaml
  connectd schema-check --registry http://127.0.0.1:8081 tables.sql`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "registry", Usage: "schema registry URL to use instead of each table's 'avro-confluent.url'"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "bound on the whole check"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.Exit("schema-check: give at least one config or DDL file", 2)
			}
			ctx, cancel := context.WithTimeout(context.Background(), c.Duration("timeout"))
			defer cancel()
			results, err := Check(ctx, c.Args().Slice(), Options{Registry: c.String("registry")})
			failed := err != nil
			for _, r := range results {
				fmt.Fprintln(c.App.Writer, r)
				if r.Err != nil {
					failed = true
				}
			}
			if err != nil {
				fmt.Fprintln(c.App.ErrWriter, "schema-check:", err)
			}
			if len(results) == 0 && err == nil {
				fmt.Fprintln(c.App.Writer, "schema-check: no avro-confluent table in the given files")
			}
			if failed {
				msg := "schema-check: a schema cannot be checked"
				for _, r := range results {
					if errors.Is(r.Err, compat.ErrIncompatible) {
						msg = "schema-check: a schema is incompatible"
						break
					}
				}
				return cli.Exit(msg, 1)
			}
			return nil
		},
	}
}
