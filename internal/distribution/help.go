package distribution

import (
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
)

// usage is the one line that follows the binary's name in `connectd --help`.
const usage = "Kafka pipelines in YAML with Apache Flink's Kafka connector semantics - " + DocumentationURL

// description is the top of `connectd --help`: what to run first. Every
// `create` line makes a config that `connectd lint` accepts (test/e2e
// checks it).
const description = `Either run connectd as a stream processor or choose a command:

  connectd list inputs
  connectd create kafka_source//kafka_sink > ./config.yaml
  connectd lint ./config.yaml
  connectd run ./config.yaml
  connectd run -r "./production/*.yaml" ./config.yaml
  connectd schema > connectd.schema.json   # for editors (docs/editors.md)

Components: docs/components/ in the repository, or connectd list --format cue.`

var helpOnce sync.Once

// installHelp replaces the name line and the description of the app help
// in urfave/cli's template (a package variable: Benthos's CLI builds its
// app with a fixed "A stream processor for mundane tasks" usage and a
// description that suggests `create kafka//file`, and exposes neither). The
// rest of the template is urfave's own.
func installHelp() {
	helpOnce.Do(func() {
		cli.AppHelpTemplate = helpTemplate(cli.AppHelpTemplate)
	})
}

// helpTemplate returns tmpl with connectd's usage line and description in
// place of the app's. A template without those places comes back as is
// (the help test then fails).
func helpTemplate(tmpl string) string {
	indented := strings.ReplaceAll(description, "\n", "\n   ")
	indented = strings.ReplaceAll(indented, "\n   \n", "\n\n")
	r := strings.NewReplacer(
		`{{template "helpNameTemplate" .}}`, `{{.HelpName}} - `+usage,
		`{{template "descriptionTemplate" .}}`, indented,
	)
	return r.Replace(tmpl)
}
