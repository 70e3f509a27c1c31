package distribution

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestWantsVersion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--version"}, true},
		{[]string{"-v"}, true},
		{[]string{"-version"}, true},
		{nil, false},
		{[]string{"run", "--version"}, false},
		{[]string{"--version", "run"}, false},
		{[]string{"lint"}, false},
	} {
		if got := WantsVersion(c.args); got != c.want {
			t.Errorf("WantsVersion(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

func TestPrintVersionNamesTheProduct(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	PrintVersion(&b, "1.2.3", "2026-01-02T03:04:05Z")
	first, _, _ := strings.Cut(b.String(), "\n")
	if first != "connectd 1.2.3" {
		t.Errorf("first line %q, want %q", first, "connectd 1.2.3")
	}
	for _, want := range []string{"Date: 2026-01-02T03:04:05Z", "Benthos: ", "Go: go"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("version output lacks %q:\n%s", want, b.String())
		}
	}
}

// The help template keeps urfave's layout with connectd's name line and
// description: rendered for an app like Benthos's, it names connectd and
// none of Benthos's text.
func TestHelpTemplate(t *testing.T) {
	t.Parallel()
	tmpl := helpTemplate(cli.AppHelpTemplate)
	if tmpl == cli.AppHelpTemplate {
		t.Fatal("urfave/cli's app help template has no name line or description to replace")
	}
	var out bytes.Buffer
	app := &cli.App{
		Name:        "connectd",
		Usage:       "A stream processor for mundane tasks",
		Description: "connectd create kafka//file > ./config.yaml",
		Writer:      &out,
		Commands:    []*cli.Command{{Name: "run", Usage: "Run connectd"}},
	}
	app.Setup()
	cli.HelpPrinter(&out, tmpl, app)
	help := out.String()
	for _, want := range []string{"connectd - " + usage, "connectd create kafka_source//kafka_sink", "COMMANDS:", "run"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	for _, bad := range []string{"mundane", "kafka//file"} {
		if strings.Contains(help, bad) {
			t.Errorf("help still says %q:\n%s", bad, help)
		}
	}
}

// MainSchema's defaults are what a config without those fields gets.
func TestMainSchemaDefaults(t *testing.T) {
	t.Parallel()
	data, err := MainSchema("test", "now").MarshalJSONV0()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Config []struct {
			Name     string `json:"name"`
			Children []struct {
				Name    string `json:"name"`
				Default any    `json:"default"`
			} `json:"children"`
		} `json:"config"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, f := range doc.Config {
		for _, c := range f.Children {
			got[f.Name+"."+c.Name] = c.Default
		}
	}
	if got["http.address"] != DefaultHTTPAddress {
		t.Errorf("http.address default %v, want %s", got["http.address"], DefaultHTTPAddress)
	}
	if got["http.root_path"] != DefaultHTTPRootPath {
		t.Errorf("http.root_path default %v, want %s", got["http.root_path"], DefaultHTTPRootPath)
	}
	sf, _ := got["logger.static_fields"].(map[string]any)
	if sf[ServiceField] != Name {
		t.Errorf("logger.static_fields default %v, want {%s: %s}", got["logger.static_fields"], ServiceField, Name)
	}
}

// The bash script completes commands, subcommands, flags and list's
// component types, and leaves config paths to file completion.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	app := &cli.App{
		Name:  "connectd",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "version", Aliases: []string{"v"}}},
		Commands: []*cli.Command{
			{Name: "lint", Flags: []cli.Flag{&cli.BoolFlag{Name: "deprecated"}, &cli.StringSliceFlag{Name: "resources", Aliases: []string{"r"}}}},
			{Name: "list", Flags: []cli.Flag{&cli.StringFlag{Name: "format"}}},
			{Name: "run", Flags: []cli.Flag{&cli.StringSliceFlag{Name: "set", Aliases: []string{"s"}}}},
			{Name: "template", Subcommands: []*cli.Command{{Name: "lint", Flags: []cli.Flag{&cli.BoolFlag{Name: "verbose"}}}}},
		},
	}
	var script bytes.Buffer
	if err := writeBash(&script, app); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		line string
		want string
	}{
		{"connectd l", "lint list"},
		{"connectd -", "--version -v"},
		{"connectd lint --", "--deprecated --resources"},
		{"connectd lint -r x.yaml --d", "--deprecated"},
		{"connectd list ", strings.Join(listTypes, " ")},
		{"connectd list --format json in", "inputs"},
		{"connectd template ", "lint"},
		{"connectd template lint --", "--verbose"},
		{"connectd run ", ""},
		{"connectd run config/", ""},
	} {
		cmd := exec.Command(bash, "-c", script.String()+`
read -ra COMP_WORDS <<< "$LINE"
[[ $LINE == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_connectd
echo "${COMPREPLY[*]}"`)
		cmd.Env = append(cmd.Environ(), "LINE="+c.line)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.line, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("%q completes to %q, want %q", c.line, got, c.want)
		}
	}
}
