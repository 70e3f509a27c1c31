package tableencode

import (
	"context"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/halt"
	"github.com/connectd/connectd/internal/table"
)

// Under on_error fail a row that does not encode is dropped and stops the
// run; without kafka_* metadata the error names the message index, with it
// topic, partition and offset.
func TestFailStopsTheRun(t *testing.T) {
	t.Parallel()
	parsed, err := Spec().ParseYAML(`ddl: "CREATE TABLE t (id BIGINT NOT NULL) WITH ('format' = 'json')"`, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := table.ProcessorFromParsed(parsed)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		meta map[string]any
		want string
	}{
		{"other input", nil, "table_encode (message index 2): format json: field id: NULL in a NOT NULL column"},
		{"kafka", map[string]any{"kafka_topic": "t", "kafka_partition": 1, "kafka_offset": int64(7)},
			"table_encode (topic t, partition 1, offset 7): format json: field id: NULL in a NOT NULL column"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mgr := service.MockResources()
			p := newProcessor(c, mgr)
			row := func(v any) *service.Message {
				m := service.NewMessage(nil)
				m.SetStructured(map[string]any{"id": v})
				for k, v := range tc.meta {
					m.MetaSetMut(k, v)
				}
				return m
			}
			for i, v := range []any{1, 2, nil, 4} {
				out, err := p.Process(context.Background(), row(v))
				if err != nil || (v == nil) != (len(out) == 0) {
					t.Fatalf("message %d (%v): out %v, err %v", i, v, out, err)
				}
			}
			if err := halt.For(mgr).Err(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want the run stopped with %q, got %v", tc.want, err)
			}
		})
	}
}
