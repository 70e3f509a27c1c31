package format_test

// Benchmarks of the table-driven codecs against the libraries under them.
//
// One ~200-byte row, the same in every format (JSON, CSV, Avro, Confluent
// Avro, and the JSON text as the one column of `raw`), is decoded and
// encoded through format.New's Codec (what the processors and the Kafka
// plugins call) and, as the baseline, by the bare library doing the
// equivalent work: bytes to a generic value and back, with exact numbers and
// without the table's types. Names are
//
//	BenchmarkFormats/<format>/<decode|encode>/<contender>
//
// where contender is "table" or "bare-<library>". `go run ./bench
// -scenarios formats` runs them and prints the Markdown table of
// docs/benchmarks.md. Run with -cpu 1: ns/op is then the cost on one core.

import (
	"bytes"
	"context"
	"encoding/binary"
	stdcsv "encoding/csv"
	stdjson "encoding/json"
	"fmt"
	"sync"
	"testing"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
	"github.com/linkedin/goavro/v2"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format"
	"github.com/connectd/connectd/schema/format/avro"
	"github.com/connectd/connectd/schema/registry/registrytest"
)

// benchColumns are the benchmark row's columns; CSV and raw take no ROW
// columns, so the row is flat.
const benchColumns = `id BIGINT, user_id STRING, amount DECIMAL(10, 2), currency STRING, qty INT, price DOUBLE,
  ts TIMESTAMP(3), tags ARRAY<STRING>, ok BOOLEAN, city STRING, zip STRING, discount DOUBLE`

// benchJSON is the benchmark row as JSON (about 200 bytes).
const benchJSON = `{"id":1234567,"user_id":"user-000042","amount":1234.56,"currency":"EUR","qty":3,"price":411.52,` +
	`"ts":"2026-12-02 12:13:14.123","tags":["new","mobile","eu"],"ok":true,"city":"Berlin","zip":"10115","discount":null}`

// benchCSV is the same row as a CSV line: fields in column order, the tags
// joined by ';', NULL as the empty field.
const benchCSV = `1234567,user-000042,1234.56,EUR,3,411.52,2026-12-02 12:13:14.123,new;mobile;eu,true,Berlin,10115,`

// benchTopic names the avro-confluent subject, benchTopic-value.
const benchTopic = "orders"

func benchRowType(tb testing.TB, columns string) *schema.Type {
	tb.Helper()
	tables, err := schema.ParseDDL("CREATE TABLE orders (" + columns + ") WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'raw')")
	if err != nil {
		tb.Fatal(err)
	}
	if err := tables[0].Validate(); err != nil {
		tb.Fatal(err)
	}
	return tables[0].PhysicalRowType()
}

func newCodec(tb testing.TB, name, columns string, opts map[string]string) format.Codec {
	tb.Helper()
	c, err := format.New(name, benchRowType(tb, columns), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// benchCase is one format and operation: the table-driven codec and its
// bare-library baselines, each a function run once per record.
type benchCase struct {
	name  string // <format>/<op>
	bytes int    // record size, for b.SetBytes
	table func() error
	bare  []bareFunc
}

type bareFunc struct {
	name string // bare-<library>
	run  func() error
}

// benchCases builds every case, with the records each one reads and the
// rows each one writes made once. It checks that every format's record
// holds the same row.
func benchCases(tb testing.TB) []benchCase {
	tb.Helper()
	ctx := context.Background()
	var cases []benchCase

	// json: goccy/go-json (the library the format uses) and encoding/json,
	// both into map[string]any with exact numbers (UseNumber).
	jsonCodec := newCodec(tb, schema.FormatJSON, benchColumns, nil)
	jsonData := []byte(benchJSON)
	row, err := jsonCodec.Decode(jsonData)
	if err != nil {
		tb.Fatal(err)
	}
	var generic map[string]any
	d := stdjson.NewDecoder(bytes.NewReader(jsonData))
	d.UseNumber()
	if err := d.Decode(&generic); err != nil {
		tb.Fatal(err)
	}
	cases = append(cases,
		benchCase{name: "json/decode", bytes: len(jsonData),
			table: func() error { _, err := jsonCodec.Decode(jsonData); return err },
			bare: []bareFunc{
				{"bare-goccy", func() error {
					var m map[string]any
					d := gojson.NewDecoder(bytes.NewReader(jsonData))
					d.UseNumber()
					return d.Decode(&m)
				}},
				{"bare-encoding-json", func() error {
					var m map[string]any
					d := stdjson.NewDecoder(bytes.NewReader(jsonData))
					d.UseNumber()
					return d.Decode(&m)
				}},
			}},
		benchCase{name: "json/encode", bytes: len(jsonData),
			table: func() error { _, err := jsonCodec.Encode(row); return err },
			bare: []bareFunc{
				{"bare-goccy", func() error { _, err := gojson.Marshal(generic); return err }},
				{"bare-encoding-json", func() error { _, err := stdjson.Marshal(generic); return err }},
				// The typed row itself (time.Time as RFC 3339, decimals as
				// json.Number): goccy's cost for the same input as the
				// table's, in its own text forms.
				{"bare-goccy-typed-row", func() error { _, err := gojson.Marshal(row); return err }},
			}},
	)

	// csv: encoding/csv, a line to []string and back.
	csvCodec := newCodec(tb, schema.FormatCSV, benchColumns, nil)
	csvData := []byte(benchCSV)
	sameRow(tb, "csv", csvCodec, csvData, row)
	fields, err := stdcsv.NewReader(bytes.NewReader(csvData)).Read()
	if err != nil {
		tb.Fatal(err)
	}
	cases = append(cases,
		benchCase{name: "csv/decode", bytes: len(csvData),
			table: func() error { _, err := csvCodec.Decode(csvData); return err },
			bare: []bareFunc{{"bare-encoding-csv", func() error {
				_, err := stdcsv.NewReader(bytes.NewReader(csvData)).Read()
				return err
			}}}},
		benchCase{name: "csv/encode", bytes: len(csvData),
			table: func() error { _, err := csvCodec.Encode(row); return err },
			bare: []bareFunc{{"bare-encoding-csv", func() error {
				var buf bytes.Buffer
				w := stdcsv.NewWriter(&buf)
				if err := w.Write(fields); err != nil {
					return err
				}
				w.Flush()
				return w.Error()
			}}}},
	)

	// avro: goavro with the schema that the format derives, binary to
	// goavro's native values (unions as one-key maps, decimals as *big.Rat)
	// and back.
	avroCodec := newCodec(tb, schema.FormatAvro, benchColumns, nil)
	avroData, err := avroCodec.Encode(row)
	if err != nil {
		tb.Fatal(err)
	}
	sameRow(tb, "avro", avroCodec, avroData, row)
	goavroCodec := bareGoavro(tb, avroCodec)
	native, _, err := goavroCodec.NativeFromBinary(avroData)
	if err != nil {
		tb.Fatal(err)
	}
	cases = append(cases,
		benchCase{name: "avro/decode", bytes: len(avroData),
			table: func() error { _, err := avroCodec.Decode(avroData); return err },
			bare: []bareFunc{{"bare-goavro", func() error {
				_, _, err := goavroCodec.NativeFromBinary(avroData)
				return err
			}}}},
		benchCase{name: "avro/encode", bytes: len(avroData),
			table: func() error { _, err := avroCodec.Encode(row); return err },
			bare: []bareFunc{{"bare-goavro", func() error {
				_, err := goavroCodec.BinaryFromNative(nil, native)
				return err
			}}}},
	)

	// avro-confluent: the registry fake answers the first lookup; after it
	// the schema comes from the codec's cache. The baseline reads the
	// 5-byte header and finds goavro's codec in a locked map, as any
	// client with a schema cache does.
	reg := registrytest.New()
	tb.Cleanup(reg.Close)
	confluent, ok := newCodec(tb, schema.FormatAvroConfluent, benchColumns, map[string]string{"url": reg.URL()}).(format.RecordCodec)
	if !ok {
		tb.Fatal("avro-confluent codec is not a RecordCodec")
	}
	rec := format.Record{Topic: benchTopic}
	confluentData, err := confluent.EncodeRecord(ctx, row, rec)
	if err != nil {
		tb.Fatal(err)
	}
	if got, err := confluent.DecodeRecord(ctx, confluentData, rec); err != nil || fmt.Sprint(got) != fmt.Sprint(row) {
		tb.Fatalf("avro-confluent: decoded %v, %v; want %v", got, err, row)
	}
	id := int(binary.BigEndian.Uint32(confluentData[1:5]))
	cache := &bareSchemaCache{codecs: map[int]*goavro.Codec{id: goavroCodec}}
	cases = append(cases,
		benchCase{name: "avro-confluent/decode", bytes: len(confluentData),
			table: func() error { _, err := confluent.DecodeRecord(ctx, confluentData, rec); return err },
			bare: []bareFunc{{"bare-goavro", func() error {
				if len(confluentData) < 5 || confluentData[0] != 0 {
					return fmt.Errorf("bad header")
				}
				c, err := cache.get(int(binary.BigEndian.Uint32(confluentData[1:5])))
				if err != nil {
					return err
				}
				_, _, err = c.NativeFromBinary(confluentData[5:])
				return err
			}}}},
		benchCase{name: "avro-confluent/encode", bytes: len(confluentData),
			table: func() error { _, err := confluent.EncodeRecord(ctx, row, rec); return err },
			bare: []bareFunc{{"bare-goavro", func() error {
				c, err := cache.get(id)
				if err != nil {
					return err
				}
				out := make([]byte, 5, 5+len(avroData))
				binary.BigEndian.PutUint32(out[1:], uint32(id))
				_, err = c.BinaryFromNative(out, native)
				return err
			}}}},
	)

	// raw: the JSON text as the one STRING column. There is no library; the
	// baseline is the least the format must do by hand: check UTF-8 and
	// copy the bytes into the row's one string, and back.
	rawCodec := newCodec(tb, schema.FormatRaw, "line STRING", nil)
	rawRow := map[string]any{"line": benchJSON}
	cases = append(cases,
		benchCase{name: "raw/decode", bytes: len(jsonData),
			table: func() error { _, err := rawCodec.Decode(jsonData); return err },
			bare: []bareFunc{{"bare-go", func() error {
				if !utf8.Valid(jsonData) {
					return fmt.Errorf("not UTF-8")
				}
				sink = map[string]any{"line": string(jsonData)}
				return nil
			}}}},
		benchCase{name: "raw/encode", bytes: len(jsonData),
			table: func() error { _, err := rawCodec.Encode(rawRow); return err },
			bare: []bareFunc{{"bare-go", func() error {
				sinkBytes = []byte(rawRow["line"].(string))
				return nil
			}}}},
	)
	return cases
}

// sink and sinkBytes keep the raw baseline's conversions from being
// optimised away.
var (
	sink      map[string]any
	sinkBytes []byte
)

type bareSchemaCache struct {
	mu     sync.Mutex
	codecs map[int]*goavro.Codec
}

func (c *bareSchemaCache) get(id int) (*goavro.Codec, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	codec, ok := c.codecs[id]
	if !ok {
		return nil, fmt.Errorf("schema id %d not cached", id)
	}
	return codec, nil
}

// bareGoavro compiles the avro format's schema with goavro alone. goavro
// reads a nested `"type": "record"` as a reference to the top record when
// the top is named as Flink names it, so the top is renamed (as package avro
// does; names are not in the binary encoding).
func bareGoavro(tb testing.TB, c format.Codec) *goavro.Codec {
	tb.Helper()
	f, ok := c.(*avro.Format)
	if !ok {
		tb.Fatalf("avro codec is %T", c)
	}
	var s map[string]any
	if err := stdjson.Unmarshal([]byte(f.SchemaJSON()), &s); err != nil {
		tb.Fatal(err)
	}
	s["name"] = "top"
	text, err := stdjson.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	codec, err := goavro.NewCodec(string(text))
	if err != nil {
		tb.Fatal(err)
	}
	return codec
}

// sameRow checks that data decodes to want.
func sameRow(tb testing.TB, name string, c format.Codec, data []byte, want map[string]any) {
	tb.Helper()
	got, err := c.Decode(data)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		tb.Fatalf("%s: the benchmark record decodes to\n%v\nwant the JSON row\n%v", name, got, want)
	}
}

// TestBenchmarkRecords checks that the benchmark's records hold the same row
// in every format and that every contender runs.
func TestBenchmarkRecords(t *testing.T) {
	if n := len(benchJSON); n < 190 || n > 230 {
		t.Errorf("the JSON row has %d bytes, want about 200", n)
	}
	for _, c := range benchCases(t) {
		if err := c.table(); err != nil {
			t.Errorf("%s/table: %v", c.name, err)
		}
		for _, b := range c.bare {
			if err := b.run(); err != nil {
				t.Errorf("%s/%s: %v", c.name, b.name, err)
			}
		}
	}
}

func BenchmarkFormats(b *testing.B) {
	for _, c := range benchCases(b) {
		b.Run(c.name+"/table", func(b *testing.B) { runBench(b, c.bytes, c.table) })
		for _, bare := range c.bare {
			b.Run(c.name+"/"+bare.name, func(b *testing.B) { runBench(b, c.bytes, bare.run) })
		}
	}
}

func runBench(b *testing.B, n int, f func() error) {
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
}
