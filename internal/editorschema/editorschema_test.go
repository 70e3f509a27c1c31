package editorschema

import (
	"regexp"
	"testing"
)

// Benthos compares the options of a linted enum case-insensitively: the
// pattern accepts exactly the options in any case.
func TestCaseInsensitive(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(caseInsensitive([]string{"read_committed", "SCRAM-SHA-256", "a.b"}))
	for s, want := range map[string]bool{
		"read_committed": true, "READ_COMMITTED": true, "Read_Committed": true,
		"scram-sha-256": true, "SCRAM-SHA-256": true, "a.b": true, "A.B": true,
		"read_committedx": false, "xread_committed": false, "aXb": false, "scram_sha_256": false, "": false,
	} {
		if got := re.MatchString(s); got != want {
			t.Errorf("%q matches %v, want %v", s, got, want)
		}
	}
}

func TestInterpolation(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(interpolation)
	for s, want := range map[string]bool{
		"${READERS}": true, "${READERS:2}": true, "${A_B.c:x:y}": true, "x ${N} y": true,
		"$READERS": false, "${}": false, "two": false,
	} {
		if got := re.MatchString(s); got != want {
			t.Errorf("%q matches %v, want %v", s, got, want)
		}
	}
}

// A scalar without a default, neither optional nor deprecated, is required,
// as Benthos's linter has it; objects, lists and component fields are not.
func TestRequiredField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f    field
		want bool
	}{
		{field{Name: "topic", Type: "string", Kind: "scalar"}, true},
		{field{Name: "topic", Type: "string", Kind: "scalar", Default: []byte(`""`)}, false},
		{field{Name: "topic", Type: "string", Kind: "scalar", Optional: true}, false},
		{field{Name: "topic", Type: "string", Kind: "scalar", Deprecated: true}, false},
		{field{Name: "topics", Type: "string", Kind: "array"}, false},
		{field{Name: "tls", Type: "object", Kind: "scalar", Children: []field{{Name: "enabled"}}}, false},
		{field{Name: "output", Type: "output", Kind: "scalar"}, false},
	} {
		if got := requiredField(c.f); got != c.want {
			t.Errorf("%+v required %v, want %v", c.f, got, c.want)
		}
	}
}
