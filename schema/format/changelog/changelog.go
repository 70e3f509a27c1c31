// Package changelog is what the changelog formats share: a row's change
// kind (Flink's RowKind), a decoded change, and the JSON envelope helpers of
// the flink-json CDC formats (debezium-json, canal-json, maxwell-json,
// ogg-json, in the packages beside this one).
//
// A changelog record holds zero or more changes: a Debezium update is an
// update-before row and an update-after row, a Canal insert may hold many
// rows, a tombstone holds none.
package changelog

import (
	"fmt"
	"strings"
)

// Kind is the change kind of a row, as Flink's RowKind.
type Kind int8

// Change kinds. The zero Kind is Insert.
const (
	// Insert is Flink's INSERT, "+I".
	Insert Kind = iota
	// UpdateBefore is Flink's UPDATE_BEFORE, "-U": the row as it was
	// before an update.
	UpdateBefore
	// UpdateAfter is Flink's UPDATE_AFTER, "+U": the row after an update.
	UpdateAfter
	// Delete is Flink's DELETE, "-D".
	Delete
)

var shortNames = [...]string{"+I", "-U", "+U", "-D"}
var longNames = [...]string{"INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"}

// String returns the kind as Flink prints it (RowKind.shortString): "+I",
// "-U", "+U" or "-D".
func (k Kind) String() string {
	if k < 0 || int(k) >= len(shortNames) {
		return fmt.Sprintf("Kind(%d)", int8(k))
	}
	return shortNames[k]
}

// Name returns Flink's RowKind name: INSERT, UPDATE_BEFORE, UPDATE_AFTER or
// DELETE.
func (k Kind) Name() string {
	if k < 0 || int(k) >= len(longNames) {
		return k.String()
	}
	return longNames[k]
}

// IsRetract reports whether the kind takes a row away (-U, -D): Flink's
// changelog serializers write it as a delete.
func (k Kind) IsRetract() bool { return k == UpdateBefore || k == Delete }

// ParseKind reads a kind in either of Flink's spellings, "+I" or "INSERT"
// (case-insensitive).
func ParseKind(s string) (Kind, error) {
	t := strings.TrimSpace(s)
	for i := range shortNames {
		if t == shortNames[i] || strings.EqualFold(t, longNames[i]) {
			return Kind(i), nil
		}
	}
	return Insert, fmt.Errorf("unknown row kind %q (want +I, -U, +U, -D or INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE)", s)
}

// Change is one row of a changelog record and its kind.
type Change struct {
	Kind Kind
	Row  map[string]any
	// Meta holds the format's readable metadata of the record (keys
	// without the `value.` prefix: `source.timestamp`), as Go values of
	// the types schema.FormatMetadata declares; nil when the codec was not
	// asked for metadata. Every change of a record shares it.
	Meta map[string]any
}

// Last returns the row of the last change, nil for none: how a changelog
// codec's single-row Decode reads a record.
func Last(changes []Change, err error) (map[string]any, error) {
	if err != nil || len(changes) == 0 {
		return nil, err
	}
	return changes[len(changes)-1].Row, nil
}

// Record is what a changelog codec that talks to a schema registry
// (debezium-avro-confluent) uses besides the bytes or the row.
type Record struct {
	// Topic is the record's Kafka topic, for the default subject
	// (`<topic>-value`); "" when unknown.
	Topic string
}
