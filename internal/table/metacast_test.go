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
	c, err := NewCodec(table(t, `CREATE TABLE t (
	  v STRING,
	  pb BIGINT METADATA FROM 'partition' VIRTUAL,
	  ps STRING METADATA FROM 'partition' VIRTUAL,
	  od DECIMAL(20, 0) METADATA FROM 'offset' VIRTUAL,
	  tw TIMESTAMP(3) METADATA FROM 'timestamp' VIRTUAL,
	  td DATE METADATA FROM 'timestamp' VIRTUAL,
	  ts STRING METADATA FROM 'timestamp' VIRTUAL,
	  tl TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
	  hs MAP<STRING, STRING> METADATA FROM 'headers' VIRTUAL,
	  local_day AS DATE_FORMAT(tl, 'yyyy-MM-dd HH:mm')
	) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'json', 'table.local-time-zone' = 'Asia/Kolkata')`))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 3, 9, 20, 0, 0, 0, time.UTC) // 01:30 on the 10th in Kolkata (+05:30)
	row, err := c.Decode(context.Background(), Record{Topic: "x", Partition: 3, Offset: 42, Timestamp: at, HasTimestamp: true,
		Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}, Value: []byte(`{"v":"a"}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"pb": int64(3), "ps": "3", "od": json.Number("42"),
		"tw":        time.Date(2024, 3, 10, 1, 30, 0, 0, time.UTC),
		"td":        time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC),
		"ts":        "2024-03-10 01:30:00.000",
		"tl":        at,
		"local_day": "2024-03-10 01:30",
	}
	for k, w := range want {
		if got := row[k]; got != w {
			t.Errorf("%s = %#v, want %#v", k, got, w)
		}
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
