package tableencode_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/connectd/connectd/plugins/processor/tabledecode"
	_ "github.com/connectd/connectd/plugins/processor/tableencode"
	"github.com/connectd/connectd/schema"
)

const table = `
  ddl: |
    CREATE TABLE readings (
      sensor STRING NOT NULL,
      value DECIMAL(6, 3),
      at TIMESTAMP(3),
      tags ARRAY<STRING>,
      attrs MAP<STRING, BIGINT>
    ) WITH ('format' = '%s')
`

// buildProc builds a processor from its YAML config, as a pipeline does.
func buildProc(t *testing.T, conf string) *service.OwnedProcessor {
	t.Helper()
	spec := service.NewConfigSpec().Field(service.NewProcessorField("p"))
	indented := "p:\n  " + strings.ReplaceAll(conf, "\n", "\n  ")
	parsed, err := spec.ParseYAML(indented, nil)
	if err != nil {
		t.Fatalf("%s: %v", indented, err)
	}
	p, err := parsed.FieldProcessor("p")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	row := map[string]any{
		"sensor": "s-1", "value": json.Number("-1.250"), "at": time.Date(2026, 12, 2, 12, 13, 14, 123000000, time.UTC),
		"tags": []any{"a", nil}, "attrs": map[string]any{"floor": int64(3)},
	}
	for _, format := range []string{"json", "avro"} {
		enc := buildProc(t, "table_encode:"+strings.Replace(table, "%s", format, 1))
		dec := buildProc(t, "table_decode:"+strings.Replace(table, "%s", format, 1))
		msg := service.NewMessage(nil)
		msg.SetStructured(row)
		out, err := enc.Process(context.Background(), msg)
		if err != nil || len(out) != 1 || out[0].GetError() != nil {
			t.Fatalf("%s: encode: %v %v", format, out, err)
		}
		back, err := dec.Process(context.Background(), out[0])
		if err != nil || len(back) != 1 || back[0].GetError() != nil {
			t.Fatalf("%s: decode: %v %v", format, back, err)
		}
		got, _ := back[0].AsStructured()
		if !schema.Equal(got, row) {
			t.Fatalf("%s: round trip: got %#v", format, got)
		}
	}
}

func TestEncodePolicies(t *testing.T) {
	t.Parallel()
	bad := func() *service.Message {
		m := service.NewMessage([]byte(`{"value":"lots"}`))
		m.MetaSetMut("kafka_topic", "readings")
		m.MetaSetMut("kafka_partition", 0)
		m.MetaSetMut("kafka_offset", 99)
		return m
	}
	conf := "table_encode:" + strings.Replace(table, "%s", "json", 1)
	// fail: the record does not go on (the run stops: stop_test.go).
	out, err := buildProc(t, conf).Process(context.Background(), bad())
	if err != nil || len(out) != 0 {
		t.Fatalf("fail: %v %v", out, err)
	}
	out, err = buildProc(t, conf+"  on_error: skip\n").Process(context.Background(), bad())
	if err != nil || len(out) != 0 {
		t.Fatalf("skip: %v %v", out, err)
	}
	out, err = buildProc(t, conf+"  on_error: dead_letter\n").Process(context.Background(), bad())
	if err != nil || len(out) != 1 || out[0].GetError() == nil ||
		!strings.Contains(out[0].GetError().Error(), "table_encode (topic readings, partition 0, offset 99): format json: field sensor: NULL in a NOT NULL column") {
		t.Fatalf("dead_letter: %v %v", out, err)
	}
	if raw, _ := out[0].AsBytes(); string(raw) != `{"value":"lots"}` {
		t.Fatalf("dead_letter keeps the message: %s", raw)
	}
	notObject := service.NewMessage([]byte(`[1,2]`))
	out, _ = buildProc(t, conf+"  on_error: dead_letter\n").Process(context.Background(), notObject)
	if len(out) != 1 || out[0].GetError() == nil || !strings.Contains(out[0].GetError().Error(), "want an object (a row), got []interface {}") {
		t.Fatalf("not an object: %v", out)
	}
}
