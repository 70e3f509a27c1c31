package avroconfluent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/connectd/connectd/schema/compat"
	"github.com/connectd/connectd/schema/format/avroconfluent"
	"github.com/connectd/connectd/schema/registry"
	"github.com/connectd/connectd/schema/registry/registrytest"
)

// Schema evolution: before the table's schema is registered, the subject's
// compatibility level is checked through the registry's own endpoint; an
// incompatible schema is refused before anything is registered, naming the
// field that breaks it (the registry's reasons, or the local check's when
// the registry gives none); a compatible one registers.
func TestSchemaEvolution(t *testing.T) {
	t.Parallel()
	const (
		v1 = `CREATE TABLE t (id BIGINT NOT NULL, name STRING) WITH ('format' = 'avro')`
		// A NULL-able column added: readable from v1 data (default null).
		v2 = `CREATE TABLE t (id BIGINT NOT NULL, name STRING, note STRING) WITH ('format' = 'avro')`
		// A NOT NULL column added: v1 data has no value for it.
		addRequired = `CREATE TABLE t (id BIGINT NOT NULL, name STRING, qty INT NOT NULL) WITH ('format' = 'avro')`
		// A type changed.
		retyped = `CREATE TABLE t (id STRING NOT NULL, name STRING) WITH ('format' = 'avro')`
	)
	for _, tc := range []struct {
		name      string
		level     compat.Level
		reasons   bool
		next      string
		wantField string // "" = compatible
	}{
		{"backward, a NULL-able column added", compat.Backward, true, v2, ""},
		{"backward, a NOT NULL column added, with the registry's reasons", compat.Backward, true, addRequired, "field qty"},
		{"backward, a NOT NULL column added, no reasons: the local check names it", compat.Backward, false, addRequired, "field qty"},
		{"full, a type changed", compat.Full, false, retyped, "field id"},
		{"none allows a type change", compat.None, false, retyped, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := registrytest.New()
			defer reg.Close()
			reg.SetCompatibility("", tc.level, tc.reasons)
			ctx := context.Background()
			rec := avroconfluent.Record{Topic: "orders"}
			first := newFormat(t, reg, rowType(t, v1), nil)
			if _, err := first.EncodeRecord(ctx, map[string]any{"id": 1, "name": "a"}, rec); err != nil {
				t.Fatal(err)
			}
			next := newFormat(t, reg, rowType(t, tc.next), nil)
			row := map[string]any{"id": 2, "name": "b", "note": "n", "qty": 3}
			if tc.next == retyped {
				row["id"] = "2"
			}
			registers := reg.Requests("POST", "/subjects/orders-value/versions")
			_, err := next.EncodeRecord(ctx, row, rec)
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("a compatible schema was refused: %v", err)
				}
				if reg.Requests("POST", "/subjects/orders-value/versions") != registers+1 {
					t.Fatal("the compatible schema was not registered")
				}
				return
			}
			if !errors.Is(err, registry.ErrIncompatible) || !strings.Contains(err.Error(), tc.wantField) ||
				!strings.Contains(err.Error(), "subject orders-value") || !strings.Contains(err.Error(), string(tc.level)) {
				t.Fatalf("want an incompatible-schema error naming the subject, the level and %s, got %v", tc.wantField, err)
			}
			if got := reg.Requests("POST", "/subjects/orders-value/versions"); got != registers {
				t.Fatalf("the incompatible schema was sent for registration (%d requests)", got-registers)
			}
		})
	}
}
