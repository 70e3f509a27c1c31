package docsgen

import (
	"regexp"
	"strings"
)

// Every connectd field's description names its Flink counterpart in its
// last sentence: "Flink option: `scan.startup.mode`.", "Flink equivalent:
// ...", "Flink: ...", "No Flink equivalent.", "Flink has no ...". flinkOf
// takes that sentence for the fields table; the field's section keeps the
// whole description.

// flinkLead matches the start of a sentence about Flink.
var flinkLead = regexp.MustCompile(`(?:^|[.!?]\s+)((?:Flink option|Flink equivalent|Flink)\s*:\s*|Flink has no\b|No Flink\b)`)

// sentenceBreak is a full stop followed by a new sentence.
var sentenceBreak = regexp.MustCompile(`[.!?]\s+[A-Z*]`)

// flinkOf returns the Flink counterpart named by the last sentence of desc
// ("" when the description has no such sentence, or when text follows it,
// so that cutting it out could misquote).
func flinkOf(desc string) string {
	desc = strings.TrimSpace(desc)
	locs := flinkLead.FindAllStringSubmatchIndex(desc, -1)
	if len(locs) == 0 {
		return ""
	}
	last := locs[len(locs)-1]
	lead := desc[last[2]:last[3]]
	tail := desc[last[3]:]
	if sentenceBreak.MatchString(masked(tail)) {
		return ""
	}
	tail = strings.TrimSuffix(strings.TrimSpace(tail), ".")
	if strings.Contains(lead, ":") {
		return tail // the value after "Flink option:"
	}
	// "No Flink equivalent", "Flink has no ...": the whole sentence.
	return strings.TrimSuffix(strings.TrimSpace(desc[last[2]:]), ".")
}

// masked replaces code spans and parenthesised text with x, so that the
// full stops inside them do not read as sentence breaks.
func masked(s string) string {
	b := []byte(s)
	code, depth := false, 0
	for i, c := range b {
		switch {
		case c == '`':
			code = !code
		case code:
			b[i] = 'x'
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth > 0:
			b[i] = 'x'
		}
	}
	return string(b)
}
