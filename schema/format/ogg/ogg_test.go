package ogg_test

import (
	"testing"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/changelog"
	"github.com/connectd/connectd/schema/format/changelog/changelogtest"
	"github.com/connectd/connectd/schema/format/ogg"
)

// TestDecodeDocumentedRecords reads GoldenGate's documented records
// (testdata/README.md) as Flink's OggJsonDeserializationSchema does.
func TestDecodeDocumentedRecords(t *testing.T) {
	row, err := schema.ParseType("ROW<id INT, name STRING, description STRING, weight DOUBLE>")
	if err != nil {
		t.Fatal(err)
	}
	b := func(o map[string]string) (changelogtest.Codec, error) { return ogg.New(row, o) }
	changelogtest.RunFiles(t, row, b, []changelogtest.Case{
		{File: "update.json", Meta: true, Want: `-U {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.18}
+U {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15}
meta event-timestamp = 2020-05-13T15:40:06Z
meta ingestion-timestamp = 2020-05-13T15:40:07.123Z
meta primary-keys = [id]
meta table = PRODUCTS
`},
		{File: "insert.json", Want: `+I {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.18}
`},
		{File: "delete.json", Want: `-D {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15}
`},
		{File: "truncate.json", Want: `error: unknown "op_type" value "T"`},
		{File: "truncate.json", Opts: map[string]string{"ignore-parse-errors": "true"}, Want: ""},
	})
}

func TestEncode(t *testing.T) {
	row, _ := schema.ParseType("ROW<id INT, name STRING>")
	f, err := ogg.New(row, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := map[string]any{"id": int64(1), "name": "a"}
	for kind, want := range map[changelog.Kind]string{
		changelog.Insert:       `{"before":null,"after":{"id":1,"name":"a"},"op_type":"I"}`,
		changelog.UpdateAfter:  `{"before":null,"after":{"id":1,"name":"a"},"op_type":"I"}`,
		changelog.UpdateBefore: `{"before":{"id":1,"name":"a"},"after":null,"op_type":"D"}`,
		changelog.Delete:       `{"before":{"id":1,"name":"a"},"after":null,"op_type":"D"}`,
	} {
		got, err := f.EncodeChange(r, kind)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s: got %s, want %s", kind, got, want)
		}
		back, err := f.DecodeChanges(got)
		if err != nil || len(back) != 1 || back[0].Kind.IsRetract() != kind.IsRetract() || back[0].Row["name"] != "a" {
			t.Errorf("%s: read back %+v, %v", kind, back, err)
		}
	}
}
