package csv

import (
	"strconv"
	"strings"
)

// appendBigDecimal appends a DECIMAL, given as a plain decimal string with
// the column's scale ("-12.50", "100", "0.05"), as Flink's csv format writes
// it: as it is (plain, with its scale), or with scientific, as
// BigDecimal.stripTrailingZeros().toString() (zero is 0), which Flink
// writes with `csv.write-bigdecimal-in-scientific-notation` = true.
func appendBigDecimal(buf []byte, plain string, scientific bool) []byte {
	if !scientific {
		return append(buf, plain...)
	}
	neg := strings.HasPrefix(plain, "-")
	digits := strings.TrimPrefix(strings.TrimPrefix(plain, "-"), "+")
	intPart, frac, _ := strings.Cut(digits, ".")
	unscaled := strings.TrimLeft(intPart+frac, "0")
	scale := len(frac)
	if unscaled == "" {
		return append(buf, '0')
	}
	for strings.HasSuffix(unscaled, "0") {
		unscaled = unscaled[:len(unscaled)-1]
		scale--
	}
	if neg {
		buf = append(buf, '-')
	}
	adjusted := len(unscaled) - 1 - scale
	switch {
	case scale == 0:
		return append(buf, unscaled...)
	case scale > 0 && adjusted >= -6:
		if n := len(unscaled) - scale; n > 0 {
			buf = append(buf, unscaled[:n]...)
			buf = append(buf, '.')
			return append(buf, unscaled[n:]...)
		}
		buf = append(buf, "0."...)
		buf = append(buf, strings.Repeat("0", scale-len(unscaled))...)
		return append(buf, unscaled...)
	}
	// Scientific: one digit before the point, the adjusted exponent after
	// E, with its sign ("1E+5", "1.25E-7").
	buf = append(buf, unscaled[0])
	if len(unscaled) > 1 {
		buf = append(buf, '.')
		buf = append(buf, unscaled[1:]...)
	}
	buf = append(buf, 'E')
	if adjusted > 0 {
		buf = append(buf, '+')
	}
	return strconv.AppendInt(buf, int64(adjusted), 10)
}
