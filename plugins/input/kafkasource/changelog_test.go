package kafkasource

import (
	"context"
	"fmt"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/table"
)

// A debezium-json table: a record gives zero or more rows (an update two),
// each a message with its kind in row_kind and the envelope's metadata
// columns; the offsets of all the records (the tombstone's too) are
// committed once the batch is acknowledged, and a nacked batch is
// delivered again with every row.
func TestTableSourceChangelogRows(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	produce(t, addr,
		&kgo.Record{Topic: "t", Partition: 0, Value: []byte(`{"before":null,"after":{"id":1,"name":"ada"},"source":{"db":"shop","table":"users","ts_ms":1700000000000},"op":"c","ts_ms":1700000000500}`)},
		&kgo.Record{Topic: "t", Partition: 0, Value: []byte(`{"before":{"id":1,"name":"ada"},"after":{"id":1,"name":"ada l."},"source":{"db":"shop","table":"users"},"op":"u"}`)},
		&kgo.Record{Topic: "t", Partition: 0, Value: nil},
		&kgo.Record{Topic: "t", Partition: 0, Value: []byte(`{"before":{"id":1,"name":"ada l."},"after":null,"source":{"db":"shop","table":"users"},"op":"d"}`)},
	)
	ddl := fmt.Sprintf(`CREATE TABLE users (
  id BIGINT,
  name STRING,
  tbl STRING METADATA FROM 'value.source.table' VIRTUAL,
  src_ts TIMESTAMP_LTZ(3) METADATA FROM 'value.source.timestamp' VIRTUAL,
  off BIGINT METADATA FROM 'offset' VIRTUAL
) WITH (
  'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '%s', 'properties.group.id' = 'cdc',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'debezium-json'
)`, addr)
	s := newSourceIn(t, yamlDDL(ddl)+"commit_period: 1h\n", service.MockResources(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	var got []string
	var acks []func() error
	for len(got) < 4 {
		batch, ack, err := s.ReadBatch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			// Nack the first batch: its rows come again, all of them.
			if err := ack(ctx, fmt.Errorf("downstream failed")); err != nil {
				t.Fatal(err)
			}
			first := len(batch)
			batch, ack, err = s.ReadBatch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(batch) != first {
				t.Fatalf("redelivered %d messages, first delivery had %d", len(batch), first)
			}
		}
		for _, m := range batch {
			kind, _ := m.MetaGetMut(table.MetaRowKind)
			v, err := m.AsStructured()
			if err != nil {
				t.Fatal(err)
			}
			row := v.(map[string]any)
			got = append(got, fmt.Sprintf("%v id=%v name=%v tbl=%v src_ts=%v off=%v", kind, row["id"], row["name"], row["tbl"], ms(row["src_ts"]), row["off"]))
		}
		acks = append(acks, func() error { return ack(ctx, nil) })
	}
	want := []string{
		"+I id=1 name=ada tbl=users src_ts=1700000000000 off=0",
		"-U id=1 name=ada tbl=users src_ts=<nil> off=1",
		"+U id=1 name=ada l. tbl=users src_ts=<nil> off=1",
		"-D id=1 name=ada l. tbl=users src_ts=<nil> off=3",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows\n%v\nwant\n%v", got, want)
	}
	for _, a := range acks {
		if err := a(); err != nil {
			t.Fatal(err)
		}
	}
	eventually.True(t, testTimeout, "offset 4 committed for t/0", func() bool {
		commitTick(t, s)
		return committedOffsets(t, addr, "cdc")[topicPartition{"t", 0}] == 4
	})
}

func ms(v any) any {
	if ts, ok := v.(interface{ UnixMilli() int64 }); ok {
		return ts.UnixMilli()
	}
	return v
}
