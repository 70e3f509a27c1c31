package eventwindow

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// AggOp is a built-in, incremental aggregate function (Flink's
// AggregateFunction): the window keeps one accumulator, not its rows.
type AggOp uint8

const (
	// AggCount counts the window's records (`count`), or the records whose
	// path is not null (`count(path)`), as SQL COUNT(*) and COUNT(col).
	AggCount AggOp = iota + 1
	// AggSum adds the numbers at path; nulls are skipped (SQL SUM).
	AggSum
	// AggMin keeps the smallest number at path (SQL MIN).
	AggMin
	// AggMax keeps the largest number at path (SQL MAX).
	AggMax
	// AggFirst keeps the value at path of the record with the smallest event
	// time (the earliest arrival among equal event times), nulls included.
	AggFirst
	// AggLast keeps the value at path of the record with the largest event
	// time (the latest arrival among equal event times), nulls included.
	AggLast
)

var aggOpNames = map[string]AggOp{
	"count": AggCount, "sum": AggSum, "min": AggMin, "max": AggMax, "first": AggFirst, "last": AggLast,
}

// AggregateSpec is one entry of the `aggregates` field: the result field
// Name is Op over the value at Path of each record's JSON content.
type AggregateSpec struct {
	Name string
	Op   AggOp
	Path []string // nil: count(*)
}

// parseAggregate parses `count`, `count(path)`, `sum(path)`, `min(path)`,
// `max(path)`, `first(path)` or `last(path)`; path is a dot path into the
// record's JSON content (`amount`, `order.total`).
func parseAggregate(name, s string) (AggregateSpec, error) {
	s = strings.TrimSpace(s)
	fn, arg, hasArg := strings.Cut(s, "(")
	fn = strings.TrimSpace(fn)
	op, ok := aggOpNames[fn]
	if !ok {
		return AggregateSpec{}, fmt.Errorf("%q: unknown function %q: want count, count(path), sum(path), min(path), max(path), first(path) or last(path)", s, fn)
	}
	spec := AggregateSpec{Name: name, Op: op}
	if !hasArg {
		if op != AggCount {
			return AggregateSpec{}, fmt.Errorf("%q: %s needs a path, e.g. %s(amount)", s, fn, fn)
		}
		return spec, nil
	}
	arg, ok = strings.CutSuffix(strings.TrimSpace(arg), ")")
	arg = strings.TrimSpace(arg)
	if !ok || arg == "" || strings.ContainsAny(arg, "()") {
		return AggregateSpec{}, fmt.Errorf("%q: want %s(path) with a dot path such as amount or order.total", s, fn)
	}
	if op == AggCount && arg == "*" {
		return spec, nil
	}
	spec.Path = strings.Split(strings.TrimPrefix(arg, "this."), ".")
	for _, p := range spec.Path {
		if p == "" {
			return AggregateSpec{}, fmt.Errorf("%q: empty segment in path %q", s, arg)
		}
	}
	return spec, nil
}

func (a AggregateSpec) numeric() bool { return a.Op == AggSum || a.Op == AggMin || a.Op == AggMax }

// lookup returns the value at path in v, nil when absent.
func lookup(v any, path []string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

var errNotNumber = errors.New("not a number")

// number converts a JSON number to an int64 (exact) or a float64.
func number(v any) (i int64, f float64, isInt bool, err error) {
	switch n := v.(type) {
	case int64:
		return n, float64(n), true, nil
	case int:
		return int64(n), float64(n), true, nil
	case int32:
		return int64(n), float64(n), true, nil
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), float64(n), true, nil
		}
		return 0, float64(n), false, nil
	case float64:
		return 0, n, false, nil
	case float32:
		return 0, float64(n), false, nil
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, float64(i), true, nil
		}
		f, err := n.Float64()
		if err != nil {
			return 0, 0, false, fmt.Errorf("%w: %q", errNotNumber, n.String())
		}
		return 0, f, false, nil
	}
	return 0, 0, false, fmt.Errorf("%w: %T", errNotNumber, v)
}

// acc is the accumulator of one aggregate in one window. One struct for
// every op keeps a window's accumulators in a single allocation.
type acc struct {
	n     int64 // count; for sum/min/max the number of non-null values
	isum  int64
	fsum  float64
	float bool // sum has seen a non-integer (or overflowed int64)
	best  float64
	val   any // min/max: original value; first/last: value
	ts    int64
	seq   uint64
}

// add folds one record's value into the accumulator. v is nil for a missing
// or null value; numeric ops have already checked v is a number.
func (a *acc) add(op AggOp, v any, ts int64, seq uint64) {
	switch op {
	case AggCount:
		a.n++
	case AggSum:
		i, f, isInt, _ := number(v)
		a.n++
		if isInt && !a.float {
			s := a.isum + i
			if (s > a.isum) == (i > 0) || i == 0 {
				a.isum = s
				return
			}
			a.float, a.fsum = true, float64(a.isum) // overflow: go on in float64
		} else if !a.float {
			a.float, a.fsum = true, float64(a.isum)
		}
		a.fsum += f
	case AggMin, AggMax:
		_, f, _, _ := number(v)
		if a.n == 0 || (op == AggMin && f < a.best) || (op == AggMax && f > a.best) {
			a.best, a.val = f, v
		}
		a.n++
	case AggFirst:
		if a.n == 0 || ts < a.ts || (ts == a.ts && seq < a.seq) {
			a.val, a.ts, a.seq = v, ts, seq
		}
		a.n++
	case AggLast:
		if a.n == 0 || ts > a.ts || (ts == a.ts && seq > a.seq) {
			a.val, a.ts, a.seq = v, ts, seq
		}
		a.n++
	}
}

// merge folds o into a (session windows that a record bridges).
func (a *acc) merge(op AggOp, o *acc) {
	if o.n == 0 {
		return
	}
	switch op {
	case AggCount:
		a.n += o.n
	case AggSum:
		if !a.float && !o.float {
			s := a.isum + o.isum
			if (s > a.isum) == (o.isum > 0) || o.isum == 0 {
				a.isum, a.n = s, a.n+o.n
				return
			}
		}
		af, of := a.fsum, o.fsum
		if !a.float {
			af = float64(a.isum)
		}
		if !o.float {
			of = float64(o.isum)
		}
		a.float, a.fsum, a.n = true, af+of, a.n+o.n
	case AggMin, AggMax:
		if a.n == 0 || (op == AggMin && o.best < a.best) || (op == AggMax && o.best > a.best) {
			a.best, a.val = o.best, o.val
		}
		a.n += o.n
	case AggFirst:
		if a.n == 0 || o.ts < a.ts || (o.ts == a.ts && o.seq < a.seq) {
			a.val, a.ts, a.seq = o.val, o.ts, o.seq
		}
		a.n += o.n
	case AggLast:
		if a.n == 0 || o.ts > a.ts || (o.ts == a.ts && o.seq > a.seq) {
			a.val, a.ts, a.seq = o.val, o.ts, o.seq
		}
		a.n += o.n
	}
}

// result is the aggregate's value in the result document: count is an
// int64; sum an int64 while every value was an integer, else a float64; min,
// max, first and last the value as it was in the record. An aggregate over
// no non-null value is null (SQL), except count which is 0.
func (a *acc) result(op AggOp) any {
	switch op {
	case AggCount:
		return a.n
	case AggSum:
		if a.n == 0 {
			return nil
		}
		if a.float {
			return a.fsum
		}
		return a.isum
	}
	if a.n == 0 {
		return nil
	}
	return a.val
}
