package schema

import (
	"fmt"
	"strconv"
	"time"

	"github.com/connectd/connectd/schema/javatime"
)

// MetadataType is the type of a Kafka readable metadata key in Flink's
// KafkaDynamicSource (`partition` is INT NOT NULL, `offset` BIGINT NOT NULL,
// `timestamp` TIMESTAMP_LTZ(3) NOT NULL, ...); nil for an unknown key.
func MetadataType(key string) *Type {
	switch key {
	case "topic", "timestamp-type":
		return &Type{Kind: KindVarchar, Length: MaxLength, NotNull: true}
	case "partition":
		return &Type{Kind: KindInt, NotNull: true}
	case "leader-epoch":
		return &Type{Kind: KindInt}
	case "offset":
		return &Type{Kind: KindBigint, NotNull: true}
	case "timestamp":
		return &Type{Kind: KindTimestampLTZ, Precision: 3, NotNull: true}
	case "headers":
		return &Type{Kind: KindMap, Key: &Type{Kind: KindVarchar, Length: MaxLength}, Value: &Type{Kind: KindVarbinary, Length: MaxLength}, NotNull: true}
	}
	return nil
}

func numericKind(k Kind) bool {
	switch k {
	case KindTinyint, KindSmallint, KindInt, KindBigint, KindFloat, KindDouble, KindDecimal:
		return true
	}
	return false
}

// metadataCastable reports whether a metadata column may declare type to
// for metadata of type from: as Flink, any type the metadata type casts to
// explicitly (LogicalTypeCasts.supportsExplicitCast), within what connectd
// converts.
func metadataCastable(from, to *Type) bool {
	switch {
	case from.Kind == KindMap:
		return to.Kind == KindMap && to.Value != nil && (to.Value.IsBinary() || to.Value.IsString())
	case to.IsString():
		return true
	case numericKind(from.Kind):
		return numericKind(to.Kind) || to.Kind == KindBoolean
	case from.Kind == KindTimestampLTZ:
		return to.IsTimestamp() || to.Kind == KindDate || to.Kind == KindTime
	case from.IsString():
		return numericKind(to.Kind) || to.Kind == KindBoolean || to.IsTimestamp() || to.Kind == KindDate || to.Kind == KindTime || to.IsBinary()
	}
	return false
}

// CastMetadata converts the value v of metadata key (of MetadataType(key))
// to the column's declared type, as Flink's CAST does: a TIMESTAMP_LTZ
// shown as TIMESTAMP, DATE or TIME is its wall clock in loc
// (`table.local-time-zone`), a number as STRING is its digits, a number as
// BOOLEAN is true unless zero, header bytes as STRING are UTF-8 text. what
// names the column in errors.
func CastMetadata(key string, to *Type, v any, loc *time.Location, what string) (any, error) {
	if v == nil {
		return Coerce(to, nil, what)
	}
	switch x := v.(type) {
	case time.Time:
		if key == "timestamp" {
			switch {
			case to.Kind == KindTimestamp || to.Kind == KindDate || to.Kind == KindTime:
				l := x.In(loc)
				v = time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
			case to.IsString():
				l := x.In(loc)
				return l.Format("2006-01-02 15:04:05.000"), nil
			}
		}
	case int64:
		if to.Kind == KindBoolean {
			return x != 0, nil
		}
	case map[string]any:
		if to.Kind == KindMap && to.Value != nil && to.Value.IsString() {
			out := make(map[string]any, len(x))
			for k, b := range x {
				if bs, ok := b.([]byte); ok {
					out[k] = string(bs)
				} else {
					out[k] = b
				}
			}
			v = out
		}
	}
	return Coerce(to, v, what)
}

// ToLocalTimestamp is the instant of a TIMESTAMP's wall clock in loc (a
// TIMESTAMP column written as the record timestamp, Flink's CAST to
// TIMESTAMP_LTZ).
func ToLocalTimestamp(wall time.Time, loc *time.Location) time.Time {
	w := wall.UTC()
	return javatime.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc).UTC()
}

// validateMetadataType checks the declared type of a metadata column
// against the metadata's type; errors name the column and both types.
func validateMetadataType(c Column) error {
	from := MetadataType(c.MetadataKey)
	if from == nil || c.Type == nil {
		return nil
	}
	if !metadataCastable(from, c.Type) {
		example := *from
		example.NotNull = false
		return fmt.Errorf("column %s: metadata %s is %s, which Flink cannot cast to %s; declare a type it casts to (for example %s)",
			c.Name, strconv.Quote(c.MetadataKey), from, c.Type, &example)
	}
	return nil
}

// validateMetadataKeys refuses two metadata columns of one key, as Flink
// does ("declare one as the metadata column and the others as computed
// columns over it").
func (t *Table) validateMetadataKeys() []error {
	var errs []error
	first := map[string]string{}
	for _, c := range t.Columns {
		if c.Kind != Metadata {
			continue
		}
		if prev, ok := first[c.MetadataKey]; ok {
			errs = append(errs, fmt.Errorf("table %s: columns %s and %s both read metadata %s; declare one as the metadata column "+
				"and the other as a computed column over it (%s AS CAST(%s AS ...)), as Flink requires",
				t.Name, prev, c.Name, strconv.Quote(c.MetadataKey), c.Name, prev))
			continue
		}
		first[c.MetadataKey] = c.Name
	}
	return errs
}
