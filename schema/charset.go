package schema

import (
	"fmt"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
)

// javaCharsetAliases are the Java names of charsets that the IANA registry
// spells otherwise (java.nio.charset.Charset.forName accepts both).
var javaCharsetAliases = map[string]string{
	"utf8": "UTF-8", "utf16": "UTF-16", "utf_16": "UTF-16", "utf_16be": "UTF-16BE", "utf_16le": "UTF-16LE",
	"unicodebigunmarked": "UTF-16BE", "unicodelittleunmarked": "UTF-16LE",
	"ascii": "US-ASCII", "iso8859_1": "ISO-8859-1", "iso8859-1": "ISO-8859-1",
	"cp1250": "windows-1250", "cp1251": "windows-1251", "cp1252": "windows-1252", "cp1253": "windows-1253",
	"cp1254": "windows-1254", "cp1255": "windows-1255", "cp1256": "windows-1256", "cp1257": "windows-1257",
	"cp1258": "windows-1258", "sjis": "Shift_JIS", "euc_jp": "EUC-JP", "euc_kr": "EUC-KR",
}

// LookupCharset returns the character encoding of a charset name as Java's
// Charset.forName reads it (Flink's `raw.charset`): an IANA name or alias,
// or a Java alias such as UTF8 or Cp1252, case-insensitive. The encoding is
// nil for UTF-8, the native form of strings. A charset unknown here, or
// known but without an encoder (UTF-32), is an error.
func LookupCharset(name string) (encoding.Encoding, error) {
	n := strings.TrimSpace(name)
	if alias, ok := javaCharsetAliases[strings.ToLower(n)]; ok {
		n = alias
	}
	enc, err := ianaindex.IANA.Encoding(n)
	if err != nil || enc == nil {
		return nil, fmt.Errorf("unsupported charset %q (want a charset name as Java spells it, such as UTF-8, ISO-8859-1, US-ASCII, UTF-16, UTF-16LE, windows-1252, GBK or Shift_JIS)", name)
	}
	if enc == unicode.UTF8 {
		return nil, nil
	}
	return enc, nil
}

func charsetName(v string) error {
	_, err := LookupCharset(v)
	return err
}
