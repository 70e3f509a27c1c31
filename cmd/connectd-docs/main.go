// Command connectd-docs writes the reference pages of connectd's components
// (docs/components/*.md) from their specs, and the "Flink option ->
// connectd" page (docs/flink-options.md) from the option tables: `make
// docs` runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/connectd/connectd/internal/docsgen"
	_ "github.com/connectd/connectd/plugins/bundle"
)

func main() {
	out := flag.String("out", "docs/components", "directory of the component pages")
	options := flag.String("flink-options", docsgen.FlinkOptionsPath, "the \"Flink option -> connectd\" page")
	flag.Parse()
	if err := docsgen.Write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "connectd-docs:", err)
		os.Exit(1)
	}
	if err := docsgen.WriteFlinkOptions(*options); err != nil {
		fmt.Fprintln(os.Stderr, "connectd-docs:", err)
		os.Exit(1)
	}
}
