package speclint

import (
	"slices"
	"strings"
	"testing"
)

func init() {
	RegisterFieldHints(testOutput, map[string]string{
		"max_inflight":   "write max_in_flight",
		"batching.bytes": "batching counts messages only",
		"batching":       "one object, not a list",
	})
	RegisterNameHint(Output, "speclint_foreign", "use speclint_test_output")
}

func checkMessages(doc string) []string {
	var out []string
	for _, p := range CheckYAML([]byte(doc)) {
		out = append(out, p.String())
	}
	return out
}

// A field the component does not have is reported with the component's
// hint for it, or the closest field name, at its line and column; an object
// given as a list with its hint.
func TestUnknownFieldsSayWhatWasMeant(t *testing.T) {
	t.Parallel()
	doc := `output:
  speclint_test_output:
    max_in_fligth: 2
    max_inflight: 2
    moed: fast
    batching:
      count: 2
      cuont: 3
      bytes: 10
    zzzzzz: 1
`
	want := []string{
		"(3,5) field max_in_fligth: speclint_test_output has no such field; did you mean max_in_flight?",
		"(4,5) field max_inflight: speclint_test_output has no such field; write max_in_flight",
		"(5,5) field moed: speclint_test_output has no such field; did you mean mode?",
		"(8,7) field batching.cuont: speclint_test_output has no such field; did you mean batching.count?",
		"(9,7) field batching.bytes: speclint_test_output has no such field; batching counts messages only",
		"(10,5) field zzzzzz: speclint_test_output has no such field",
	}
	if got := checkMessages(doc); !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got := checkMessages("output:\n  speclint_test_output:\n    batching:\n      - count: 2\n")
	if want := "(4,7) field batching: expected an object, got a list; one object, not a list"; !slices.Contains(got, want) {
		t.Errorf("problems %q lack %q", got, want)
	}
	if got := checkMessages("output:\n  speclint_test_output:\n    max_in_flight: 2\n    batching:\n      count: 1\n"); len(got) != 0 {
		t.Errorf("a clean config: %q", got)
	}
}

// A component name no component of its type has is reported where it
// stands (inside brokers, switch cases and processor lists too), with the
// registered hint or the closest name.
func TestComponentNamesSayWhatWasMeant(t *testing.T) {
	t.Parallel()
	doc := `input:
  label: in
  broker:
    inputs:
      - generat:
          mapping: root = 1
      - generate:
          mapping: root = 2
  processors:
    - mappnig: root = this
pipeline:
  processors:
    - switch:
        - check: 'true'
          processors:
            - bloblang: root = this
            - lgo: {}
output:
  switch:
    cases:
      - output:
          speclint_foreign: {}
      - output:
          qwertyuiop: {}
`
	want := []string{
		"(5,9) field input.broker.inputs[0].generat: no input is called generat; did you mean generate?",
		"(10,7) field input.processors[0].mappnig: no processor is called mappnig; did you mean mapping?",
		"(17,15) field pipeline.processors[0].switch[0].processors[1].lgo: no processor is called lgo; did you mean log?",
		"(22,11) field output.switch.cases[0].output.speclint_foreign: no output is called speclint_foreign; use speclint_test_output",
		"(24,11) field output.switch.cases[1].output.qwertyuiop: no output is called qwertyuiop (`connectd list outputs` lists them)",
	}
	if got := checkMessages(doc); !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestClosest(t *testing.T) {
	t.Parallel()
	names := []string{"consumer_group", "topics", "topic_pattern", "seed_brokers", "tls", "sasl"}
	for _, c := range []struct{ in, want string }{
		{"consumer_grop", "consumer_group"},
		{"topcis", "topics"},
		{"topic", "topics"},
		{"seed_broker", "seed_brokers"},
		{"brokers", ""},
		{"tsl", "tls"},
		{"sals", "sasl"},
		{"xyz", ""},
		{"group", ""},
	} {
		if got := closest(c.in, names); got != c.want {
			t.Errorf("closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
