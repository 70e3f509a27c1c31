package editorschema

import (
	"fmt"
	"os"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"
)

// Command is the `schema` subcommand: it prints the JSON Schema of configs
// under the schema mainSchema returns (the binary's, with its defaults).
func Command(mainSchema func() *service.ConfigSchema) *cli.Command {
	return &cli.Command{
		Name:  "schema",
		Usage: "Print a JSON Schema of connectd configs for editors (descriptions, defaults, enums, examples)",
		Description: `Every component of this binary, connectd's and Benthos's, with its field docs.
Point the YAML language server at it with a first line in a config:

  connectd schema > connectd.schema.json
  # yaml-language-server: $schema=./connectd.schema.json

(docs/editors.md has the VS Code and Neovim settings).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the schema to this file instead of stdout"},
		},
		Action: func(c *cli.Context) error {
			data, err := Generate(mainSchema())
			if err != nil {
				return err
			}
			data = append(data, '\n')
			if out := c.String("out"); out != "" {
				if err := os.WriteFile(out, data, 0o644); err != nil {
					return fmt.Errorf("schema: %w", err)
				}
				return nil
			}
			_, err = c.App.Writer.Write(data)
			return err
		},
	}
}
