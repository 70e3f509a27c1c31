package avroconfluent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/pythontest"
	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/avroconfluent"
	"github.com/connectd/connectd/schema/registry/registrytest"
)

// python returns the interpreter for testdata/interop.py, with
// confluent-kafka's schema registry client and fastavro.
func python(t *testing.T) string {
	t.Helper()
	return pythontest.Interpreter(t, "confluent_kafka.schema_registry.avro, fastavro", "'confluent-kafka[avro,schemaregistry]' fastavro requests")
}

func runInterop(t *testing.T, py, url, mode, topic string, stdin []byte) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-W", "ignore", "testdata/interop.py", url, mode, topic)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("interop.py %s: %v\n%s", mode, err, stderr.String())
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestInteropPythonToConnectd decodes records that Confluent's
// AvroSerializer wrote with its own schema (names, namespace, field order,
// logical types), registered in the fake registry.
func TestInteropPythonToConnectd(t *testing.T) {
	t.Parallel()
	py := python(t)
	reg := registrytest.New()
	defer reg.Close()
	lines := runInterop(t, py, reg.URL(), "produce", "py-readings", nil)
	if len(lines) != 2 {
		t.Fatalf("want 2 records, got %q", lines)
	}
	row := rowType(t, "CREATE TABLE readings (sensor STRING NOT NULL, ok BOOLEAN, `count` INT, total BIGINT, ratio FLOAT, `value` DOUBLE, "+
		"price DECIMAL(10, 2), `day` DATE, `at` TIME(3), ts TIMESTAMP(3), `raw` BYTES, tags ARRAY<STRING>, attrs MAP<STRING, BIGINT>, "+
		"loc ROW<lat DOUBLE, lon DOUBLE>) WITH ('format' = 'avro')")
	f := newFormat(t, reg, row, nil)
	want := []map[string]any{
		{
			"sensor": "s-1", "ok": true, "count": int64(-7), "total": int64(9007199254740993), "ratio": 0.5, "value": -1.25,
			"price": json.Number("12.34"), "day": time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC),
			"at": time.Date(1970, 1, 1, 23, 59, 58, 120000000, time.UTC), "ts": time.Date(2026, 12, 2, 12, 13, 14, 123000000, time.UTC),
			"raw": []byte{0, 1, 255}, "tags": []any{"a", "b"}, "attrs": map[string]any{"floor": int64(3), "none": nil},
			"loc": map[string]any{"lat": 52.5, "lon": 13.25},
		},
		{
			"sensor": "", "ok": false, "count": int64(0), "total": int64(0), "ratio": 0.0, "value": 0.0,
			"price": nil, "day": time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), "at": time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
			"ts": nil, "raw": []byte{}, "tags": []any{}, "attrs": map[string]any{}, "loc": nil,
		},
	}
	for i, l := range lines {
		data, err := hex.DecodeString(l)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.DecodeRecord(context.Background(), data, avroconfluent.Record{Topic: "py-readings"})
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !schema.Equal(got, want[i]) {
			t.Errorf("record %d\n got %#v\nwant %#v", i, got, want[i])
		}
	}
	if reg.Requests("POST", "/subjects/py-readings-value/versions") != 1 {
		t.Errorf("the Python serializer registered under TopicNameStrategy's subject: %d", reg.Requests("POST", "/subjects/py-readings-value/versions"))
	}
}

// TestInteropConnectdToPython has Confluent's AvroDeserializer read records
// that connectd wrote (the schema derived from the table, as Flink derives
// it), and compares the values it prints.
func TestInteropConnectdToPython(t *testing.T) {
	t.Parallel()
	py := python(t)
	reg := registrytest.New()
	defer reg.Close()
	f := newFormat(t, reg, rowType(t, allTypes), nil)
	full := fullRow()
	full["d"] = 1e300 // JSON has no Infinity
	nulls := map[string]any{"i": int64(0)}
	var in bytes.Buffer
	for _, row := range []map[string]any{full, nulls} {
		data, err := f.EncodeRecord(context.Background(), row, avroconfluent.Record{Topic: "go-readings"})
		if err != nil {
			t.Fatal(err)
		}
		in.WriteString(hex.EncodeToString(data) + "\n")
	}
	lines := runInterop(t, py, reg.URL(), "consume", "go-readings", in.Bytes())
	want := []string{
		`{"s": "héllo", "c": "ab", "b": true, "ti": -128, "si": 32767, "i": -2147483648, "bi": 9223372036854775807,
		  "f": 3.140000104904175, "d": 1e300, "dec": {"decimal": "-1234567890123456.7891"}, "d8": {"date": "1969-12-31"},
		  "tm": {"time_ms": 86398120}, "ts": {"timestamp_ms": 1796213594123}, "by": {"bytes": "AAH/"},
		  "arr": [1, null], "m": {"a": 1.5, "b": null}, "r": {"x": null, "y": [{"z": 7}, null]}}`,
		`{"s": null, "c": null, "b": null, "ti": null, "si": null, "i": 0, "bi": null, "f": null, "d": null, "dec": null,
		  "d8": null, "tm": null, "ts": null, "by": null, "arr": null, "m": null, "r": null}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("want %d records from Python, got %q", len(want), lines)
	}
	for i := range want {
		if !sameJSON(t, lines[i], want[i]) {
			t.Errorf("record %d: Python read\n%s\nwant\n%s", i, lines[i], want[i])
		}
	}
}

// sameJSON compares two JSON texts with numbers compared exactly as
// rationals (Python prints 0.0 where Go prints 0).
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	return reflect.DeepEqual(exactNumbers(t, a), exactNumbers(t, b))
}

func exactNumbers(t *testing.T, text string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case json.Number:
			r, ok := new(big.Rat).SetString(string(x))
			if !ok {
				t.Fatalf("number %s", x)
			}
			return r.RatString()
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
		}
		return v
	}
	return walk(v)
}
