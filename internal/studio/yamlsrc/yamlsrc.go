// Package yamlsrc maps a pipeline's YAML nodes back to the text the editor
// shows: where a node starts and ends (1-based line and column, as
// `connectd lint` reports them), where a character of a scalar's value sits
// in the file (a DDL error inside a `ddl: |` block), and what can still be
// read of a file that does not parse.
//
// The studio's graph and catalog views use it so that a click or an error
// lands on the right line of the editor buffer.
package yamlsrc

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Pos is a 1-based line and column (columns in characters).
type Pos struct {
	Line int `json:"line"`
	Col  int `json:"col"`
}

// Range is the text from Start to End, both inclusive.
type Range struct {
	Start Pos `json:"start"`
	End   Pos `json:"end"`
}

// Problem is an error at a position of the file. File is set when the
// position is in another file (a catalog file).
type Problem struct {
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
}

// Source is the text of a YAML file, by lines.
type Source struct {
	lines []string
}

// NewSource splits src into lines (a trailing \r is dropped).
func NewSource(src []byte) *Source {
	lines := strings.Split(string(src), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return &Source{lines: lines}
}

// line returns line n (1-based), "" out of range.
func (s *Source) line(n int) string {
	if n < 1 || n > len(s.lines) {
		return ""
	}
	return s.lines[n-1]
}

// Start is where n starts: its anchor, tag or first character.
func Start(n *yaml.Node) Pos { return Pos{Line: n.Line, Col: n.Column} }

// Range is the text of a mapping entry: from key to the end of val. With a
// nil key it is val's own range.
func (s *Source) Range(key, val *yaml.Node) Range {
	start := val
	if key != nil {
		start = key
	}
	return Range{Start: Start(start), End: s.End(val)}
}

// End is the position of the last character of n.
func (s *Source) End(n *yaml.Node) Pos {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return Start(n)
		}
		return s.End(n.Content[len(n.Content)-1])
	case yaml.MappingNode, yaml.SequenceNode:
		if n.Style&yaml.FlowStyle != 0 {
			return s.flowEnd(Start(n))
		}
		if len(n.Content) == 0 {
			return Start(n)
		}
		return s.End(n.Content[len(n.Content)-1])
	case yaml.AliasNode:
		return s.tokenEnd(Start(n), "*"+n.Value)
	}
	switch {
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return s.blockEnd(n)
	case n.Style&yaml.DoubleQuotedStyle != 0:
		return s.quotedEnd(Start(n), '"')
	case n.Style&yaml.SingleQuotedStyle != 0:
		return s.quotedEnd(Start(n), '\'')
	}
	if n.Value == "" || strings.Contains(n.Value, "\n") {
		return s.lineEnd(Start(n))
	}
	return s.tokenEnd(Start(n), n.Value)
}

// tokenEnd is the end of the first occurrence of tok at or after p on p's
// line (after an anchor or tag), else the end of that line.
func (s *Source) tokenEnd(p Pos, tok string) Pos {
	l := s.line(p.Line)
	off := byteOffset(l, p.Col)
	if i := strings.Index(l[off:], tok); i >= 0 {
		return Pos{Line: p.Line, Col: utf8.RuneCountInString(l[:off+i+len(tok)])}
	}
	return s.lineEnd(p)
}

// lineEnd is the last character of p's line before a comment, at least p.
func (s *Source) lineEnd(p Pos) Pos {
	l := s.line(p.Line)
	if i := strings.Index(l, " #"); i >= 0 && i >= byteOffset(l, p.Col) {
		l = l[:i]
	}
	end := utf8.RuneCountInString(strings.TrimRight(l, " \t"))
	return Pos{Line: p.Line, Col: max(end, p.Col)}
}

// quotedEnd scans from p (which may be at an anchor or tag before the
// quote) to the closing quote q, across lines.
func (s *Source) quotedEnd(p Pos, q rune) Pos {
	line, l := p.Line, s.line(p.Line)
	off := byteOffset(l, p.Col)
	open := strings.IndexRune(l[off:], q)
	if open < 0 {
		return s.lineEnd(p)
	}
	off += open + 1
	for line <= len(s.lines) {
		for off < len(l) {
			r, size := utf8.DecodeRuneInString(l[off:])
			switch {
			case q == '"' && r == '\\':
				off += size + 1
				continue
			case r == q && q == '\'' && off+1 < len(l) && l[off+1] == '\'':
				off += 2
				continue
			case r == q:
				return Pos{Line: line, Col: utf8.RuneCountInString(l[:off+size])}
			}
			off += size
		}
		line++
		l, off = s.line(line), 0
	}
	return s.lineEnd(p)
}

// flowEnd scans from p to the bracket that closes the flow collection
// opened at or after p, skipping quoted text.
func (s *Source) flowEnd(p Pos) Pos {
	depth := 0
	line, l := p.Line, s.line(p.Line)
	off := byteOffset(l, p.Col)
	for line <= len(s.lines) {
		for off < len(l) {
			r, size := utf8.DecodeRuneInString(l[off:])
			switch r {
			case '[', '{':
				depth++
			case ']', '}':
				depth--
				if depth == 0 {
					return Pos{Line: line, Col: utf8.RuneCountInString(l[:off+size])}
				}
			case '"', '\'':
				end := s.quotedEnd(Pos{Line: line, Col: utf8.RuneCountInString(l[:off]) + 1}, r)
				line, l = end.Line, s.line(end.Line)
				off = byteOffset(l, end.Col+1)
				continue
			case '#':
				if off == 0 || l[off-1] == ' ' || l[off-1] == '\t' {
					off = len(l)
					continue
				}
			}
			off += size
		}
		line++
		l, off = s.line(line), 0
	}
	return s.lineEnd(p)
}

// blockIndent returns the first content line of the block scalar n and its
// indentation in characters; ok is false when the block has no content.
func (s *Source) blockIndent(n *yaml.Node) (first, indent int, ok bool) {
	header := s.line(n.Line)
	// An explicit indentation indicator (`|2`) fixes the indent relative to
	// the parent's, taken as the header line's indentation.
	if k := explicitIndent(header[byteOffset(header, n.Column):]); k > 0 {
		return n.Line + 1, leading(header) + k, true
	}
	for i := n.Line + 1; i <= len(s.lines); i++ {
		if strings.TrimSpace(s.line(i)) == "" {
			continue
		}
		ind := leading(s.line(i))
		if ind <= leading(header) {
			return 0, 0, false
		}
		return n.Line + 1, ind, true
	}
	return 0, 0, false
}

// explicitIndent returns the indentation indicator of a block scalar
// header (`|2-`, `>+1`), 0 when there is none.
func explicitIndent(header string) int {
	i := strings.IndexAny(header, "|>")
	if i < 0 {
		return 0
	}
	for _, r := range header[i+1:] {
		switch {
		case r >= '1' && r <= '9':
			return int(r - '0')
		case r != '+' && r != '-':
			return 0
		}
	}
	return 0
}

// blockEnd is the last non-blank character of a `|` or `>` block scalar.
func (s *Source) blockEnd(n *yaml.Node) Pos {
	first, indent, ok := s.blockIndent(n)
	if !ok {
		return s.lineEnd(Start(n))
	}
	end := Pos{Line: n.Line, Col: utf8.RuneCountInString(strings.TrimRight(s.line(n.Line), " \t"))}
	for i := first; i <= len(s.lines); i++ {
		l := s.line(i)
		if strings.TrimSpace(l) == "" {
			continue
		}
		if leading(l) < indent {
			break
		}
		end = Pos{Line: i, Col: utf8.RuneCountInString(strings.TrimRight(l, " \t"))}
	}
	return end
}

// ValuePos maps a position (1-based line and column) in the scalar n's value (a DDL
// error inside `ddl: |`) to its position in the file. ok is false when the
// value's text is not laid out line for line in the file (a folded block,
// or a plain or quoted scalar over several lines); callers then point at
// Start(n).
func (s *Source) ValuePos(n *yaml.Node, at Pos) (Pos, bool) {
	line, col := at.Line, at.Col
	switch {
	case n.Kind != yaml.ScalarNode:
		return Pos{}, false
	case n.Style&yaml.LiteralStyle != 0:
		first, indent, ok := s.blockIndent(n)
		if !ok {
			return Pos{}, false
		}
		return Pos{Line: first + line - 1, Col: indent + col}, true
	case n.Style&yaml.FoldedStyle != 0 || strings.Contains(n.Value, "\n") || line != 1:
		return Pos{}, false
	}
	l := s.line(n.Line)
	off := byteOffset(l, n.Column)
	quote := 0
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		quote = 1
	}
	// The value starts after any anchor or tag: find it on the line.
	probe := n.Value
	if quote == 1 {
		probe = l[off:]
		q := "\""
		if n.Style&yaml.SingleQuotedStyle != 0 {
			q = "'"
		}
		if i := strings.Index(probe, q); i >= 0 {
			return Pos{Line: n.Line, Col: utf8.RuneCountInString(l[:off+i]) + quote + col}, true
		}
		return Pos{}, false
	}
	if i := strings.Index(l[off:], probe); i >= 0 {
		return Pos{Line: n.Line, Col: utf8.RuneCountInString(l[:off+i]) + col}, true
	}
	return Pos{}, false
}

// leading counts the leading spaces of l.
func leading(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// byteOffset is the byte offset of the 1-based character column col of l,
// clamped to l.
func byteOffset(l string, col int) int {
	off := 0
	for i := 1; i < col && off < len(l); i++ {
		_, size := utf8.DecodeRuneInString(l[off:])
		off += size
	}
	return off
}

// lineOf matches yaml.v3's "yaml: line N: ..." errors.
var lineOf = regexp.MustCompile(`^yaml: line (\d+): `)

// Parse parses src into its root mapping. A file that does not parse
// still gives what can be read: yaml.v3 yields nothing of a document with
// a syntax error (and names a line that is often the start of the
// enclosing block, not the broken one), so Parse tries the file with one
// line blanked, from the named line on (a line being typed is usually a
// leaf: lines that open a block are not blanked, so no child moves to
// another parent), and else the lines before the named line alone, fewer
// while they fail too. Blanking keeps every line where it is, so ranges
// stay right. The error is returned as a Problem at yaml.v3's line. root
// is nil when nothing could be read.
func Parse(src []byte) (root *yaml.Node, problems []Problem) {
	var doc yaml.Node
	err := yaml.Unmarshal(src, &doc)
	if err == nil {
		return mappingOf(&doc), nil
	}
	p := Problem{Message: err.Error(), Line: 1, Col: 1}
	if m := lineOf.FindStringSubmatch(err.Error()); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		p.Message = strings.TrimPrefix(err.Error(), m[0])
	}
	lines := strings.Split(string(src), "\n")
	for i := max(p.Line, 1); i <= min(len(lines), p.Line+maxBlankTries); i++ {
		if strings.TrimSpace(lines[i-1]) == "" || opensBlock(lines, i-1) {
			continue
		}
		blanked := slices.Clone(lines)
		blanked[i-1] = ""
		var part yaml.Node
		if yaml.Unmarshal([]byte(strings.Join(blanked, "\n")), &part) == nil {
			return mappingOf(&part), []Problem{p}
		}
	}
	cut := min(p.Line-1, len(lines))
	for tries := 0; cut > 0 && tries < maxCutTries; tries++ {
		var part yaml.Node
		if yaml.Unmarshal([]byte(strings.Join(lines[:cut], "\n")), &part) == nil {
			return mappingOf(&part), []Problem{p}
		}
		cut--
	}
	return nil, []Problem{p}
}

// Bounds of Parse's attempts on a file that does not parse.
const (
	maxBlankTries = 32
	maxCutTries   = 64
)

// opensBlock reports whether line i has children: the next line that is
// not blank or a comment is indented deeper.
func opensBlock(lines []string, i int) bool {
	for _, next := range lines[i+1:] {
		t := strings.TrimSpace(next)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return leading(next) > leading(lines[i])
	}
	return false
}

// mappingOf returns the root mapping of a document, nil if it has none.
func mappingOf(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		return doc.Content[0]
	}
	return nil
}

// Resolve follows an alias to the node it names.
func Resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// Get returns the key and value of name in the mapping m (aliases
// resolved for the value), nils when absent.
func Get(m *yaml.Node, name string) (key, val *yaml.Node) {
	m = Resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i], Resolve(m.Content[i+1])
		}
	}
	return nil, nil
}

// String returns the scalar value of name in m ("" when absent or not a
// scalar).
func String(m *yaml.Node, name string) string {
	_, v := Get(m, name)
	if v == nil || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return ""
	}
	return v.Value
}

// Strings returns the scalars of the sequence name in m (a lone scalar is
// a list of one).
func Strings(m *yaml.Node, name string) []string {
	_, v := Get(m, name)
	if v == nil {
		return nil
	}
	if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		return []string{v.Value}
	}
	var out []string
	if v.Kind == yaml.SequenceNode {
		for _, c := range v.Content {
			if c = Resolve(c); c.Kind == yaml.ScalarNode {
				out = append(out, c.Value)
			}
		}
	}
	return out
}

// envVar matches Benthos's ${VAR} and ${VAR:default} interpolations.
var envVar = regexp.MustCompile(`\$\{([0-9A-Za-z_.]+)(:((\$\{[^}]+\}|[^}])*))?\}`)

// ExpandEnv substitutes environment variables in s as Benthos does before
// it parses a config: ${VAR}, or ${VAR:default} when VAR is unset or
// empty. lookup is os.LookupEnv in the studio.
func ExpandEnv(s string, lookup func(string) (string, bool)) string {
	return envVar.ReplaceAllStringFunc(s, func(m string) string {
		sub := envVar.FindStringSubmatch(m)
		if v, ok := lookup(sub[1]); ok && v != "" {
			return v
		}
		return sub[3]
	})
}
