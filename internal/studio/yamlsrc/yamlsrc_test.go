package yamlsrc

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestRanges(t *testing.T) {
	t.Parallel()
	src := strings.Join([]string{
		`a: plain value # comment`,      // 1
		`b: "quoted \" still"`,          // 2
		`c: 'it''s'`,                    // 3
		`d: [ 1, { e: "]" }, 3 ]   # x`, // 4
		`f: |`,                          // 5
		`  one`,                         // 6
		`    two`,                       // 7
		``,                              // 8
		`g: &anchor x`,                  // 9
		`h: *anchor`,                    // 10
		`i:`,                            // 11
		`  - "multi`,                    // 12
		`    line"`,                     // 13
		`j: { k: 1,`,                    // 14
		`     l: 2 }`,                   // 15
		`m: >-`,                         // 16
		`  folded`,                      // 17
		`  text`,                        // 18
		`n: ünïcode`,                    // 19
	}, "\n") + "\n"
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	s := NewSource([]byte(src))
	root := doc.Content[0]
	want := map[string]Range{
		"a": {Pos{1, 1}, Pos{1, 14}},
		"b": {Pos{2, 1}, Pos{2, 20}},
		"c": {Pos{3, 1}, Pos{3, 10}},
		"d": {Pos{4, 1}, Pos{4, 23}},
		"f": {Pos{5, 1}, Pos{7, 7}},
		"g": {Pos{9, 1}, Pos{9, 12}},
		"h": {Pos{10, 1}, Pos{10, 10}},
		"i": {Pos{11, 1}, Pos{13, 9}},
		"j": {Pos{14, 1}, Pos{15, 11}},
		"m": {Pos{16, 1}, Pos{18, 6}},
		"n": {Pos{19, 1}, Pos{19, 10}},
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if got := s.Range(k, v); got != want[k.Value] {
			t.Errorf("%s: range %+v, want %+v", k.Value, got, want[k.Value])
		}
	}
}

func TestParsePartial(t *testing.T) {
	t.Parallel()
	root, problems := Parse([]byte("input:\n  stdin: {}\noutput:\n  x: [\n"))
	if root == nil || len(problems) != 1 || problems[0].Line == 0 {
		t.Fatalf("root %v problems %+v", root, problems)
	}
	if _, in := Get(root, "input"); in == nil {
		t.Fatal("the input before the error is lost")
	}
	if root, problems := Parse([]byte("- just\n- a list\n")); root != nil || len(problems) != 0 {
		t.Fatalf("a list is no pipeline: %v %v", root, problems)
	}
}

func TestExpandEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SET": "v", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	got := ExpandEnv("${SET} ${EMPTY:d1} ${UNSET:127.0.0.1:9092} ${UNSET} ${! meta(\"x\") }", lookup)
	if want := `v d1 127.0.0.1:9092  ${! meta("x") }`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestParseKeepsWhatFollowsABrokenLine: a line being typed (a leaf) does
// not cost the graph the rest of the file, even where yaml.v3 names the
// line of the enclosing block.
func TestParseKeepsWhatFollowsABrokenLine(t *testing.T) {
	t.Parallel()
	const tail = "pipeline:\n  processors:\n    - mapping: 'root = this'\noutput:\n  drop: {}\n"
	cases := map[string]string{
		"unclosed flow sequence": "input:\n  kafka_source:\n    topics: [ a\n    consumer_group: g\n" + tail,
		"unclosed quote":         "input:\n  kafka_source:\n    topics: \"a\n    consumer_group: g\n" + tail,
		"two colons":             "input:\n  kafka_source:\n    topics: a: b\n    consumer_group: g\n" + tail,
		"missing colon":          "input:\n  kafka_source:\n    topics: [a]\n    consumer_group g\n    x: 1\n" + tail,
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, problems := Parse([]byte(src))
			if len(problems) != 1 || root == nil {
				t.Fatalf("root %v problems %+v", root, problems)
			}
			_, out := Get(root, "output")
			if out == nil || String(out, "drop") != "" {
				t.Fatalf("the output after the broken line is lost")
			}
			if _, drop := Get(out, "drop"); drop == nil || drop.Line != strings.Count(src, "\n") {
				t.Fatalf("drop %+v: lines moved", drop)
			}
			if _, in := Get(root, "input"); in == nil {
				t.Fatal("the input is lost")
			}
		})
	}
}
