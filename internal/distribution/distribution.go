// Package distribution is how the connectd binary presents itself on top of
// Benthos's CLI: its name and help text, `connectd --version`, the defaults
// of the main config that differ from Benthos's (the logs' @service field,
// the HTTP server bound to loopback), and connectd's own subcommands
// (`schema`, `completion`). cmd/connectd passes Options to
// service.RunCLIToCode.
package distribution

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/editorschema"
	"github.com/connectd/connectd/internal/schemacheck"
)

// Name is the binary's and the product's name.
const Name = "connectd"

// DocumentationURL is where the help text sends a user.
const DocumentationURL = "https://github.com/connectd/connectd"

// Options returns the CLI options that make Benthos's CLI connectd's, for a
// binary of the given version and build date. Call it once, before
// RunCLIToCode: it also installs the help template.
func Options(version, dateBuilt string) []service.CLIOptFunc {
	installHelp()
	return []service.CLIOptFunc{
		service.CLIOptSetBinaryName(Name),
		service.CLIOptSetProductName(Name),
		service.CLIOptSetVersion(version, dateBuilt),
		service.CLIOptSetDocumentationURL(DocumentationURL),
		service.CLIOptSetMainSchemaFrom(func() *service.ConfigSchema { return MainSchema(version, dateBuilt) }),
		service.CLIOptAddCommand(completionCommand()),
		service.CLIOptAddCommand(editorschema.Command(func() *service.ConfigSchema { return MainSchema(version, dateBuilt) })),
		service.CLIOptAddCommand(schemacheck.Command()),
	}
}
