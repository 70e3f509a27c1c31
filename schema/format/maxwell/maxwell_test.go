package maxwell_test

import (
	"testing"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/changelog"
	"github.com/connectd/connectd/schema/format/changelog/changelogtest"
	"github.com/connectd/connectd/schema/format/maxwell"
)

// TestDecodeDocumentedRecords reads Maxwell's documented records
// (testdata/README.md) as Flink's MaxwellJsonDeserializationSchema does.
func TestDecodeDocumentedRecords(t *testing.T) {
	row, err := schema.ParseType("ROW<id INT, name STRING, description STRING, weight DECIMAL(10, 2)>")
	if err != nil {
		t.Fatal(err)
	}
	b := func(o map[string]string) (changelogtest.Codec, error) { return maxwell.New(row, o) }
	changelogtest.RunFiles(t, row, b, []changelogtest.Case{
		{File: "insert.json", Meta: true, Want: `+I {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.18}
meta database = test
meta ingestion-timestamp = 2020-08-06T03:34:43Z
meta primary-key-columns = [id]
meta table = product
`},
		{File: "update.json", Want: `-U {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.18}
+U {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15}
`},
		{File: "delete.json", Want: `-D {"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15}
`},
		{File: "bootstrap.json", Want: `error: unknown "type" value "bootstrap-start"`},
		{File: "bootstrap.json", Opts: map[string]string{"ignore-parse-errors": "true"}, Want: ""},
	})
}

func TestEncode(t *testing.T) {
	row, _ := schema.ParseType("ROW<id INT, name STRING>")
	f, err := maxwell.New(row, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := map[string]any{"id": int64(1), "name": nil}
	for kind, want := range map[changelog.Kind]string{
		changelog.Insert:       `{"data":{"id":1,"name":null},"type":"insert"}`,
		changelog.UpdateAfter:  `{"data":{"id":1,"name":null},"type":"insert"}`,
		changelog.UpdateBefore: `{"data":{"id":1,"name":null},"type":"delete"}`,
		changelog.Delete:       `{"data":{"id":1,"name":null},"type":"delete"}`,
	} {
		got, err := f.EncodeChange(r, kind)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s: got %s, want %s", kind, got, want)
		}
		back, err := f.DecodeChanges(got)
		if err != nil || len(back) != 1 || back[0].Kind.IsRetract() != kind.IsRetract() || back[0].Row["id"] != int64(1) {
			t.Errorf("%s: read back %+v, %v", kind, back, err)
		}
	}
}
