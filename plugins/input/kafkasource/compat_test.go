package kafkasource

import (
	"strings"
	"testing"
)

func TestTopicNameProblems(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		entries []string
		want    []string
	}{
		{[]string{"orders", "a.b_c-1", "x,y", "A-Z_0.9", "日本語"}, nil},
		{[]string{"a/b"}, []string{`field topics[0]: "a/b" is not a legal Kafka topic name`}},
		{[]string{"a@b"}, []string{`"a@b" is not a legal`}},
		{[]string{"a[b"}, []string{`"a[b" is not a legal`}},
		{[]string{"a{b"}, []string{`"a{b" is not a legal`}},
		{[]string{"a`b"}, []string{"is not a legal"}},
		{[]string{"a b"}, []string{"is not a legal"}},
		{[]string{"orders", "t:0-3"}, []string{"field topics[1]: \"t:0-3\" is Redpanda Connect's topic:partitions form, not a topic name; did you mean `partitions: { t: [ 0, 1, 2, 3 ] }` (instead of topics)?"}},
		{[]string{"t:7"}, []string{"did you mean `partitions: { t: [ 7 ] }`"}},
		{[]string{"ok,bad name"}, []string{`field topics[0]: "bad name" is not a legal Kafka topic name`}},
		{[]string{"t:3-1"}, []string{`field topics[0]: "t:3-1" is not a legal Kafka topic name`}},
		{[]string{".."}, []string{`field topics[0]: ".." is not a legal Kafka topic name`}},
		{[]string{strings.Repeat("x", 250)}, []string{"is not a legal Kafka topic name"}},
	} {
		errs := topicNameProblems(c.entries)
		if len(errs) != len(c.want) {
			t.Errorf("%q: problems %v, want %d", c.entries, errs, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(errs[i].Error(), w) {
				t.Errorf("%q: %q lacks %q", c.entries, errs[i], w)
			}
		}
	}
}
