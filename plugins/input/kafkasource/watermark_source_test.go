package kafkasource

import (
	"strings"
	"testing"
	"time"
)

// WATERMARK FOR ts AS SOURCE_WATERMARK(): the watermark is kafka_source's
// own, from the record timestamps or the watermark block, which the table
// then does not contradict; FLIP-296's emit strategy on-event is what
// kafka_source does, on-periodic is refused with the reason.
func TestWatermarkTableSourceWatermark(t *testing.T) {
	t.Parallel()
	ddl := func(extra string) string {
		return `
ddl: |
  CREATE TABLE ev (
    id STRING,
    ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
    other TIMESTAMP(3),
    WATERMARK FOR ts AS SOURCE_WATERMARK()
  ) WITH (
    'connector' = 'kafka',
    'topic' = 't',
    'properties.bootstrap.servers' = 'localhost:9092',
    'properties.group.id' = 'g',
    'format' = 'json'` + extra + `
  )
`
	}
	c, err := parseConfig(t, ddl(""))
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Watermark; !w.Enabled || w.Column != "" || w.Expression != "" || w.Tracker.MaxOutOfOrderness != 0 {
		t.Fatalf("SOURCE_WATERMARK(): derived %+v, want the record timestamps with no delay", w)
	}
	c, err = parseConfig(t, ddl(",\n    'scan.watermark.emit.strategy' = 'on-event'")+"watermark: { column: other, max_out_of_orderness: 2s }")
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Watermark; !w.Enabled || w.Column != "other" || w.Tracker.MaxOutOfOrderness != 2*time.Second {
		t.Fatalf("SOURCE_WATERMARK() with a watermark block: derived %+v, want the block's", w)
	}
	_, err = parseConfig(t, ddl(",\n    'scan.watermark.emit.strategy' = 'on-periodic'"))
	if err == nil || !strings.Contains(err.Error(), "option 'scan.watermark.emit.strategy' = 'on-periodic': not supported") {
		t.Fatalf("on-periodic: got %v", err)
	}
}
