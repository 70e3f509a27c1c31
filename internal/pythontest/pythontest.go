// Package pythontest finds the Python interpreter of the interop tests:
// libraries this project did not write (Confluent's serializers, Apache
// Avro's compatibility checker, Google's protobuf) referee connectd's own
// code from Python. `make test` puts them in the checkout's venv
// (.venv-interop) and points CONNECTD_PYTHON at it.
package pythontest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Environment variables: the interpreter, and whether a missing one fails
// the test instead of skipping it.
const (
	EnvPython          = "CONNECTD_PYTHON"
	EnvRequireInterop  = "CONNECTD_REQUIRE_INTEROP"
	defaultInterpreter = "python3"
)

// Interpreter returns $CONNECTD_PYTHON (or python3) if it can import every
// module of imports (Python import syntax, e.g. "avro.compatibility,
// fastavro"). Otherwise it skips the test, saying what to install (pip
// arguments in install), or fails it when CONNECTD_REQUIRE_INTEROP=1.
func Interpreter(t testing.TB, imports, install string) string {
	t.Helper()
	py := os.Getenv(EnvPython)
	if py == "" {
		py = defaultInterpreter
	}
	out, err := exec.Command(py, "-c", "import "+imports).CombinedOutput()
	if err == nil {
		return py
	}
	msg := "this interop test needs " + py + " with " + imports + " (pip install " + install + "; make test's venv has it; set " +
		EnvPython + " to the interpreter): " + err.Error() + ": " + strings.TrimSpace(string(out))
	if os.Getenv(EnvRequireInterop) == "1" {
		t.Fatalf("%s (%s=1, so this is a failure)", msg, EnvRequireInterop)
	}
	t.Skip(msg)
	return ""
}
