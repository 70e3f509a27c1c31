package schema

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SyntaxError is a DDL error at a position of the source (1-based line and
// column, columns counted in characters).
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

type tokenKind int

const (
	tEOF tokenKind = iota
	tIdent
	tQuotedIdent // `backquoted`
	tString      // 'single quoted', ” is a quote
	tNumber
	tPunct
)

type pos struct{ off, line, col int }

type token struct {
	kind tokenKind
	text string // identifier, unquoted string value, number, or punctuation
	pos  pos
	end  int // byte offset after the token
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return fmt.Sprintf("string '%s'", t.text)
	case tQuotedIdent:
		return fmt.Sprintf("identifier `%s`", t.text)
	default:
		return fmt.Sprintf("%q", t.text)
	}
}

// is reports whether t is the keyword kw (case-insensitive, unquoted) or the
// punctuation kw.
func (t token) is(kw string) bool {
	return (t.kind == tIdent || t.kind == tPunct) && strings.EqualFold(t.text, kw)
}

// lex splits src into tokens, dropping whitespace and comments.
func lex(src string) ([]token, error) {
	l := lexer{src: src, p: pos{line: 1, col: 1}}
	var out []token
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if t.kind == tEOF {
			return out, nil
		}
	}
}

type lexer struct {
	src string
	p   pos
}

func (l *lexer) peek(n int) rune {
	off := l.p.off
	for ; n > 0 && off < len(l.src); n-- {
		_, w := utf8.DecodeRuneInString(l.src[off:])
		off += w
	}
	if off >= len(l.src) {
		return -1
	}
	r, _ := utf8.DecodeRuneInString(l.src[off:])
	return r
}

func (l *lexer) advance() rune {
	r, w := utf8.DecodeRuneInString(l.src[l.p.off:])
	l.p.off += w
	if r == '\n' {
		l.p.line++
		l.p.col = 1
	} else {
		l.p.col++
	}
	return r
}

func (l *lexer) errAt(p pos, format string, args ...any) error {
	return &SyntaxError{Line: p.line, Column: p.col, Msg: fmt.Sprintf(format, args...)}
}

func (l *lexer) next() (token, error) {
	for {
		r := l.peek(0)
		switch {
		case r == -1:
			return token{kind: tEOF, pos: l.p, end: l.p.off}, nil
		case unicode.IsSpace(r):
			l.advance()
		case r == '-' && l.peek(1) == '-':
			for r := l.peek(0); r != -1 && r != '\n'; r = l.peek(0) {
				l.advance()
			}
		case r == '/' && l.peek(1) == '*':
			start := l.p
			l.advance()
			l.advance()
			for {
				if l.peek(0) == -1 {
					return token{}, l.errAt(start, "comment /* is not closed")
				}
				if l.peek(0) == '*' && l.peek(1) == '/' {
					l.advance()
					l.advance()
					break
				}
				l.advance()
			}
		default:
			return l.token()
		}
	}
}

// quoted reads a string or an identifier quoted with q, starting at the
// opening quote: a doubled quote inside stands for one, as in Flink SQL.
// unclosed is the error when the input ends first.
func (l *lexer) quoted(start pos, q rune, unclosed string) (string, error) {
	l.advance()
	var b strings.Builder
	for {
		c := l.peek(0)
		if c == -1 {
			return "", l.errAt(start, "%s", unclosed)
		}
		l.advance()
		if c == q {
			if l.peek(0) != q {
				return b.String(), nil
			}
			l.advance()
		}
		b.WriteRune(c)
	}
}

func (l *lexer) token() (token, error) {
	start := l.p
	r := l.peek(0)
	switch {
	case r == '\'':
		text, err := l.quoted(start, '\'', "string is not closed (a quote inside a string is written '')")
		if err != nil {
			return token{}, err
		}
		return token{kind: tString, text: text, pos: start, end: l.p.off}, nil
	case r == '`':
		text, err := l.quoted(start, '`', "identifier ` is not closed")
		if err != nil {
			return token{}, err
		}
		if text == "" {
			return token{}, l.errAt(start, "empty identifier ``")
		}
		return token{kind: tQuotedIdent, text: text, pos: start, end: l.p.off}, nil
	case r == '_' || unicode.IsLetter(r):
		for c := l.peek(0); c == '_' || c == '$' || unicode.IsLetter(c) || unicode.IsDigit(c); c = l.peek(0) {
			l.advance()
		}
		return token{kind: tIdent, text: l.src[start.off:l.p.off], pos: start, end: l.p.off}, nil
	case r >= '0' && r <= '9':
		for c := l.peek(0); c >= '0' && c <= '9' || c == '.'; c = l.peek(0) {
			l.advance()
		}
		return token{kind: tNumber, text: l.src[start.off:l.p.off], pos: start, end: l.p.off}, nil
	case strings.ContainsRune("(),<>;.=-+*/%!|:[]{}\"?", r):
		l.advance()
		return token{kind: tPunct, text: string(r), pos: start, end: l.p.off}, nil
	}
	if r == utf8.RuneError {
		return token{}, l.errAt(start, "invalid UTF-8")
	}
	return token{}, l.errAt(start, "unexpected character %q", r)
}
