package table

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Metadata columns declared as any type Flink casts the metadata type to
// (issue 14 item 3): partition as BIGINT and STRING, offset as DECIMAL(20,
// 0), the LTZ timestamp as TIMESTAMP(3), DATE and STRING in the table's
// table.local-time-zone, headers as MAP<STRING, STRING>; a computed column
// over the PROCTIME clock and one over the zone.
func TestCodecMetadataCasts(t *testing.T) {
	t.Parallel()
	at := time.Date(2024, 3, 9, 20, 0, 0, 0, time.UTC) // 01:30 on the 10th in Kolkata (+05:30)
	rec := Record{Topic: "x", Partition: 3, Offset: 42, Timestamp: at, HasTimestamp: true,
		Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}, Value: []byte(`{"v":"a"}`)}
	for _, tc := range []struct {
		decl string
		want any
	}{
		{"BIGINT METADATA FROM 'partition'", int64(3)},
		{"STRING METADATA FROM 'partition'", "3"},
		{"DECIMAL(20, 0) METADATA FROM 'offset'", json.Number("42")},
		{"TIMESTAMP(3) METADATA FROM 'timestamp'", time.Date(2024, 3, 10, 1, 30, 0, 0, time.UTC)},
		{"DATE METADATA FROM 'timestamp'", time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC)},
		{"STRING METADATA FROM 'timestamp'", "2024-03-10 01:30:00.000"},
		{"TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'", at},
	} {
		c, err := NewCodec(table(t, `CREATE TABLE t (v STRING, x `+tc.decl+` VIRTUAL, local_day AS DATE_FORMAT(TO_TIMESTAMP_LTZ(1710014400000, 3), 'yyyy-MM-dd HH:mm'))
		  WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'json', 'table.local-time-zone' = 'Asia/Kolkata')`))
		if err != nil {
			t.Fatalf("%s: %v", tc.decl, err)
		}
		row, err := c.Decode(context.Background(), rec)
		if err != nil {
			t.Fatalf("%s: %v", tc.decl, err)
		}
		if got := row["x"]; got != tc.want {
			t.Errorf("%s: %#v, want %#v", tc.decl, got, tc.want)
		}
		if got := row["local_day"]; got != "2024-03-10 01:30" {
			t.Errorf("computed column in the zone: %#v", got)
		}
	}
	c, err := NewCodec(table(t, `CREATE TABLE t (v STRING, hs MAP<STRING, STRING> METADATA FROM 'headers' VIRTUAL)
	  WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'json')`))
	if err != nil {
		t.Fatal(err)
	}
	row, err := c.Decode(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := row["hs"].(map[string]any); h["h"] != "v" {
		t.Errorf("hs = %#v, want the header as a string", row["hs"])
	}
	// Written back, the TIMESTAMP wall clock is the instant in the zone.
	sink, err := NewCodec(table(t, `CREATE TABLE t (v STRING, tw TIMESTAMP(3) METADATA FROM 'timestamp')
	  WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'json', 'table.local-time-zone' = 'Asia/Kolkata')`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sink.WritableMetadata(); err != nil {
		t.Fatal(err)
	}
	enc, err := sink.Encode(context.Background(), map[string]any{"v": "a", "tw": time.Date(2024, 3, 10, 1, 30, 0, 0, time.UTC)}, "x", false)
	if err != nil {
		t.Fatal(err)
	}
	if !enc.Timestamp.Equal(at) {
		t.Errorf("record timestamp = %v, want %v", enc.Timestamp, at)
	}
}
