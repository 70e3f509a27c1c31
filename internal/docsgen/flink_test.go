package docsgen

import "testing"

func TestFlinkOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ desc, want string }{
		{"Topics to read. Default none. Flink option: `topic`.", "`topic`"},
		{"Where to start. Default `committed`. Flink option: `scan.startup.mode` = `earliest-offset` / `latest-offset`.",
			"`scan.startup.mode` = `earliest-offset` / `latest-offset`"},
		{"Leave out topics. Default none. No Flink equivalent.", "No Flink equivalent"},
		{"Pause at the limit. Flink has no direct equivalent (its bound is `a.b`. And checkpoints).",
			"Flink has no direct equivalent (its bound is `a.b`. And checkpoints)"},
		{"Idle time (Go duration). Flink: `scan.watermark.idle-timeout`.", "`scan.watermark.idle-timeout`"},
		{"Index. Flink equivalent: the index of a subtask (`getIndexOfThisSubtask`).", "the index of a subtask (`getIndexOfThisSubtask`)"},
		// Flink named inside a sentence, or text after the Flink sentence:
		// not taken.
		{"Merges sessions (Flink `EventTimeSessionWindows`). Default: `tumbling`.", ""},
		{"Flink option: `a`. Default `b`.", ""},
		{"Whether TLS is enabled.", ""},
	} {
		if got := flinkOf(c.desc); got != c.want {
			t.Errorf("flinkOf(%q) = %q, want %q", c.desc, got, c.want)
		}
	}
}
