package speclint

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// CLI runs CheckFiles for the connectd subcommands that lint or run
// configs, before Benthos reads them: `lint` reports the problems that
// Benthos's linter does not (those it finds through the components' lint
// rules it prints itself), alongside Benthos's own findings; `run` and
// `streams` stop on any problem before anything is built, with the same
// messages.
type CLI struct {
	out    io.Writer
	failed bool
}

// NewCLI returns a CLI that writes lint problems to out.
func NewCLI(out io.Writer) *CLI { return &CLI{out: out} }

// OnRunFlags checks the config files of the subcommand of c. Benthos calls
// it (service.CLIOptCustomRunFlags) for run, streams, lint, echo and test,
// and for the bare command, which runs a config given with -c.
func (h *CLI) OnRunFlags(c *cli.Context) error {
	name := ""
	if c.Command != nil {
		name = c.Command.Name
	}
	switch name {
	case "lint":
		return h.lint(c)
	case "run", "streams", "", c.App.Name:
		return h.run(c, name == "streams")
	}
	return nil
}

// lint reports the problems and lets Benthos's lint run: ExitCode then
// makes the command fail, unless every problem is a warning (strict mode,
// Benthos's --deprecated, fails on warnings too).
func (h *CLI) lint(c *cli.Context) error {
	paths := append(c.Args().Slice(), c.StringSlice("resources")...)
	if conf := c.String("config"); conf != "" {
		paths = append(paths, conf)
	}
	problems, err := CheckFiles(paths)
	if err != nil {
		return err
	}
	strict := c.Bool("deprecated")
	for _, p := range problems {
		if !p.ByRule {
			fmt.Fprintln(h.out, p)
		}
		if !p.Warning || strict {
			h.failed = true
		}
	}
	return nil
}

// run stops a run whose configs have problems, unless --chilled, with
// which Benthos runs a config that does not lint (the problems are then
// printed as warnings). Warnings are printed and do not stop the run.
func (h *CLI) run(c *cli.Context, streams bool) error {
	var paths []string
	main := c.String("config")
	if streams {
		if o := c.String("observability"); o != "" {
			main = o
		}
		paths = append(paths, c.Args().Slice()...)
	} else if c.Args().Len() == 1 {
		main = c.Args().First()
	}
	if main != "" {
		paths = append(paths, main)
	}
	paths = append(paths, c.StringSlice("resources")...)
	problems, err := CheckFiles(paths)
	if err != nil || len(problems) == 0 {
		return err
	}
	var lines []string
	for _, p := range problems {
		if p.Warning {
			fmt.Fprintf(h.out, "connectd: config warning: %s\n", p)
			continue
		}
		lines = append(lines, p.String())
	}
	if len(lines) == 0 {
		return nil
	}
	if c.Bool("chilled") {
		fmt.Fprintf(h.out, "connectd: running despite config problems (--chilled):\n%s\n", strings.Join(lines, "\n"))
		return nil
	}
	return errors.New("config problems (`connectd lint` reports them too):\n" + strings.Join(lines, "\n"))
}

// ExitCode returns the process exit code: at least 1 once lint reported a
// problem.
func (h *CLI) ExitCode(code int) int {
	if h.failed {
		return max(code, 1)
	}
	return code
}
