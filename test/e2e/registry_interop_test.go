package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/pythontest"
)

// Environment of the registry interop test. `make test` starts the registry
// (scripts/registry.sh up), exports its URL and sets the CONNECTD_REQUIRE_*
// variables, so a missing piece fails the test instead of skipping it.
const (
	envRegistryURL     = "CONNECTD_SCHEMA_REGISTRY_URL" // printed by `scripts/registry.sh env`
	envRequireRegistry = "CONNECTD_REQUIRE_REGISTRY"
)

// interopTableColumns are the columns of the table of TestRegistryInterop:
// every column but id is nullable, so Flink's AvroSchemaConverter makes it
// the union ["null", T] with default null. id is the Kafka key, in
// avro-confluent too (interopTableOptions).
const interopTableColumns = `id BIGINT NOT NULL,
        name STRING,
        qty INT,
        price DECIMAL(10, 2),
        ratio DOUBLE,
        active BOOLEAN,
        created TIMESTAMP(3),
        note STRING`

// interopTableOptions are the table's format options (after the topic and
// the brokers); %[1]s is the registry URL. The key is the record {id}, the
// value the other columns (EXCEPT_KEY), as Flink writes and reads them.
const interopTableOptions = `'key.format' = 'avro-confluent',
        'key.avro-confluent.url' = '%[1]s',
        'key.fields' = 'id',
        'value.fields-include' = 'EXCEPT_KEY',
        'format' = 'avro-confluent',
        'avro-confluent.url' = '%[1]s'`

// interopKeyColumns and interopValueColumns are the column names of key and
// value, in table order.
var (
	interopKeyColumns   = []string{"id"}
	interopValueColumns = []string{"name", "qty", "price", "ratio", "active", "created", "note"}
)

// interopKeySchema and interopValueSchema are the key and value schemas
// Flink derives for the table (AvroSchemaConverter.convertToSchema of the
// key and value columns, legacy timestamp mapping), as Flink's Java
// Schema.toString() prints them: top record `record` in namespace
// org.apache.flink.avro.generated. The Python producer writes with them, and
// connectd must register the same schemas (up to the name/namespace
// spelling, which Avro treats as the same full name).
const interopKeySchema = `{"type": "record", "name": "record", "namespace": "org.apache.flink.avro.generated", "fields": [
  {"name": "id", "type": "long"}
]}`

const interopValueSchema = `{"type": "record", "name": "record", "namespace": "org.apache.flink.avro.generated", "fields": [
  {"name": "name", "type": ["null", "string"], "default": null},
  {"name": "qty", "type": ["null", "int"], "default": null},
  {"name": "price", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}], "default": null},
  {"name": "ratio", "type": ["null", "double"], "default": null},
  {"name": "active", "type": ["null", "boolean"], "default": null},
  {"name": "created", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": null},
  {"name": "note", "type": ["null", "string"], "default": null}
]}`

// interopRow is one row of the test: nil is SQL NULL. price is the
// DECIMAL(10, 2) in its text form with the scale's two digits; priceIn, when
// set, is the text the writers are given instead (fewer fraction digits,
// which both must scale).
type interopRow struct {
	id      int64
	name    *string
	qty     *int32
	price   *string
	priceIn string
	ratio   *float64
	active  *bool
	created *time.Time
	note    *string
}

func ptr[T any](v T) *T { return &v }

// interopRows covers each type with edge values (int64 and int32 limits,
// DECIMAL(10, 2) limits and a negative one, doubles that are not exact in
// binary, a timestamp before the epoch, non-ASCII and JSON-escaped text) and
// nulls: note is null or not in turn, and the last row is null everywhere it
// can be.
func interopRows() []interopRow {
	ts := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return &v
	}
	return []interopRow{
		{id: 1, name: ptr("héllo wörld ✓"), qty: ptr[int32](-7), price: ptr("-12345678.90"), ratio: ptr(0.1),
			active: ptr(true), created: ts("2026-12-02T12:13:14.123Z"), note: nil},
		{id: 9223372036854775807, name: ptr(""), qty: ptr[int32](2147483647), price: ptr("0.05"), ratio: ptr(-98765.4321),
			active: ptr(false), created: ts("1969-12-31T23:59:59.999Z"), note: ptr("present")},
		{id: -9223372036854775807, name: ptr(`quote " and \ backslash`), qty: ptr[int32](-2147483648), price: ptr("99999999.99"),
			ratio: ptr(3.141592653589793), active: ptr(true), created: ts("2000-02-29T00:00:00Z"), note: ptr("")},
		{id: 4, name: ptr("zero"), qty: ptr[int32](0), price: ptr("0.50"), priceIn: "0.5", ratio: ptr(0.0),
			active: ptr(false), created: ts("1970-01-01T00:00:00Z"), note: nil},
		{id: 5},
	}
}

// pythonForm is the row as registry_interop.py produce reads it: the decimal
// as its text, the timestamp as milliseconds since the epoch.
func (r interopRow) pythonForm() map[string]any {
	m := r.common()
	if r.created != nil {
		m["created"] = r.created.UnixMilli()
	}
	return m
}

// bloblangForm is the row as the generate input of connectd starts from: the
// decimal as its text, the timestamp as RFC 3339 text (which the mapping
// turns into a timestamp value for odd ids).
func (r interopRow) bloblangForm() map[string]any {
	m := r.common()
	if r.created != nil {
		m["created"] = r.created.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	return m
}

func (r interopRow) common() map[string]any {
	m := map[string]any{"id": r.id}
	set := func(k string, isNil bool, v any) {
		if isNil {
			m[k] = nil
		} else {
			m[k] = v
		}
	}
	set("name", r.name == nil, deref(r.name))
	set("qty", r.qty == nil, deref(r.qty))
	set("price", r.price == nil, deref(r.price))
	if r.priceIn != "" {
		m["price"] = r.priceIn
	}
	set("ratio", r.ratio == nil, deref(r.ratio))
	set("active", r.active == nil, deref(r.active))
	set("created", r.created == nil, nil)
	set("note", r.note == nil, deref(r.note))
	return m
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// TestRegistryInterop checks connectd's avro-confluent format against
// Confluent's own client (confluent-kafka for Python, librdkafka and its
// AvroSerializer / AvroDeserializer), through the real broker and the schema
// registry of scripts/registry.sh, with the built binary:
//
//  1. Python writes the rows with the key and value schemas Flink derives for
//     the table (registered under <topic>-key and <topic>-value); `connectd
//     run` reads them with a kafka_source table in avro-confluent (stop_at:
//     latest) and writes JSON lines, which must be the rows, value by value.
//  2. `connectd run` writes the rows with a kafka_sink table in avro-confluent,
//     exactly-once; the schemas it registered under <topic>-key and
//     <topic>-value must be the ones Flink derives, each key and value must
//     carry its schema id, and Python's
//     AvroDeserializer (read_committed) must read the rows back, value by
//     value; and connectd's kafka_source must read them back too (the round
//     trip through the registry).
func TestRegistryInterop(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	url := registryURL(t)
	py := interopPython(t)
	bin := connectdBin(t)
	rows := interopRows()

	t.Run("python_to_connectd", func(t *testing.T) {
		start := time.Now()
		topic := kafkatest.NewTopic(t, brokers, "e2e-reg-py", 1)
		deleteSubjectsAtCleanup(t, url, topic)
		keySchemaFile := writeFile(t, "key.avsc", interopKeySchema)
		valueSchemaFile := writeFile(t, "value.avsc", interopValueSchema)
		var in bytes.Buffer
		for _, r := range rows {
			b, err := json.Marshal(r.pythonForm())
			if err != nil {
				t.Fatal(err)
			}
			in.Write(append(b, '\n'))
		}
		out := runPython(t, py, &in, "produce", brokers, url, topic, keySchemaFile, valueSchemaFile)
		if len(out) != 1 || out[0] != strconv.Itoa(len(rows)) {
			t.Fatalf("registry_interop.py produce printed %q, want the count %d", out, len(rows))
		}
		subjects := registrySubjects(t, url)
		for _, s := range []string{topic + "-key", topic + "-value"} {
			if !slices.Contains(subjects, s) {
				t.Fatalf("the Python serializer did not register %s; subjects: %q", s, subjects)
			}
		}

		lines := readWithConnectd(t, bin, brokers, url, topic)
		t.Logf("Python produced %d rows with AvroSerializer; connectd's kafka_source decoded %d rows (%v)", len(rows), len(lines), time.Since(start).Round(time.Millisecond))
		if len(lines) != len(rows) {
			t.Fatalf("connectd wrote %d rows, want %d:\n%s", len(lines), len(rows), strings.Join(lines, "\n"))
		}
		for i, l := range lines {
			checkConnectdRow(t, i, l, rows[i])
		}
	})

	t.Run("connectd_to_python", func(t *testing.T) {
		start := time.Now()
		topic := kafkatest.NewTopic(t, brokers, "e2e-reg-go", 1)
		deleteSubjectsAtCleanup(t, url, topic)
		var lit bytes.Buffer
		lit.WriteString("[\n")
		for i, r := range rows {
			b, err := json.Marshal(r.bloblangForm())
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				lit.WriteString(",\n")
			}
			lit.WriteString("        ")
			lit.Write(b)
		}
		lit.WriteString("\n      ]")
		conf := writeFile(t, "sink.yaml", fmt.Sprintf(`input:
  generate:
    count: %d
    interval: ""
    mapping: |
      let rows = %s
      let row = $rows.index(count("interop-rows") - 1)
      root = $row
      root.created = if $row.created != null && $row.id %% 2 == 1 { $row.created.ts_parse("2006-01-02T15:04:05.000Z07:00") } else { $row.created }
output:
  kafka_sink:
    ddl: |
      CREATE TABLE interop (
        %s
      ) WITH (
        'connector' = 'kafka',
        'topic' = '%s',
        'properties.bootstrap.servers' = '%s',
        %s,
        'sink.delivery-guarantee' = 'exactly-once',
        'sink.transactional-id-prefix' = '%s-'
      )
    table: interop
`, len(rows), lit.String(), interopTableColumns, topic, brokers, fmt.Sprintf(interopTableOptions, url), topic))
		runConnectd(t, bin, conf)

		// The registry: <topic>-key and <topic>-value hold the schemas Flink
		// derives (GET /subjects, then the latest version of each).
		subjects := registrySubjects(t, url)
		ids := map[string]int{}
		for _, s := range []struct{ subject, schema string }{{topic + "-key", interopKeySchema}, {topic + "-value", interopValueSchema}} {
			if !slices.Contains(subjects, s.subject) {
				t.Fatalf("connectd did not register %s; subjects: %q", s.subject, subjects)
			}
			id, registered := registryLatest(t, url, s.subject)
			ids[s.subject] = id
			if !sameAvroSchema(t, registered, s.schema) {
				t.Errorf("schema registered under %s:\n%s\nwant (Flink's AvroSchemaConverter):\n%s", s.subject, registered, s.schema)
			}
		}
		// The Confluent wire format: magic byte 0 and the subject's schema id.
		for i, r := range rawRecords(t, brokers, topic, len(rows)) {
			for _, kv := range []struct {
				what, subject string
				data          []byte
			}{{"key", topic + "-key", r.Key}, {"value", topic + "-value", r.Value}} {
				id := ids[kv.subject]
				if v := kv.data; len(v) < 5 || v[0] != 0 || int(binary.BigEndian.Uint32(v[1:5])) != id {
					t.Errorf("record %d: the %s does not start with magic byte 0 and schema id %d: % x", i, kv.what, id, v[:min(len(v), 5)])
				}
			}
		}

		lines := runPython(t, py, nil, "consume", brokers, url, topic, strconv.Itoa(len(rows)))
		t.Logf("connectd's kafka_sink wrote %d rows (schema ids: key %d, value %d); Python's AvroDeserializer read %d rows (%v)", len(rows), ids[topic+"-key"], ids[topic+"-value"], len(lines), time.Since(start).Round(time.Millisecond))
		if len(lines) != len(rows) {
			t.Fatalf("Python read %d rows, want %d:\n%s", len(lines), len(rows), strings.Join(lines, "\n"))
		}
		for i, l := range lines {
			checkPythonRow(t, i, l, rows[i])
		}

		// And the round trip: connectd's kafka_source reads what its
		// kafka_sink wrote, through the same registry.
		lines = readWithConnectd(t, bin, brokers, url, topic)
		t.Logf("connectd's kafka_source read back %d rows", len(lines))
		if len(lines) != len(rows) {
			t.Fatalf("connectd read back %d rows, want %d:\n%s", len(lines), len(rows), strings.Join(lines, "\n"))
		}
		for i, l := range lines {
			checkConnectdRow(t, i, l, rows[i])
		}
	})
}

// readWithConnectd runs `connectd run` with a kafka_source table in
// avro-confluent over topic, from the earliest offset to the end (stop_at:
// latest, so it exits 0), and returns the rows it wrote as JSON lines.
func readWithConnectd(t *testing.T, bin, brokers, url, topic string) []string {
	t.Helper()
	outFile := filepath.Join(t.TempDir(), "rows.jsonl")
	conf := writeFile(t, "source.yaml", fmt.Sprintf(`input:
  kafka_source:
    ddl: |
      CREATE TABLE interop (
        %s
      ) WITH (
        'connector' = 'kafka',
        'topic' = '%s',
        'properties.bootstrap.servers' = '%s',
        'properties.group.id' = '%s-group',
        'scan.startup.mode' = 'earliest-offset',
        %s
      )
    table: interop
    stop_at: latest
output:
  file:
    path: %q
    codec: lines
`, interopTableColumns, topic, brokers, topic, fmt.Sprintf(interopTableOptions, url), outFile))
	runConnectd(t, bin, conf)
	return readLines(t, outFile)
}

// registryURL returns $CONNECTD_SCHEMA_REGISTRY_URL once the registry answers
// GET /subjects; it skips the test otherwise, or fails it when
// CONNECTD_REQUIRE_REGISTRY=1.
func registryURL(t *testing.T) string {
	t.Helper()
	url := strings.TrimRight(strings.TrimSpace(os.Getenv(envRegistryURL)), "/")
	unavailable := func(msg string) {
		t.Helper()
		if os.Getenv(envRequireRegistry) == "1" {
			t.Fatalf("%s (%s=1, so this is a failure)", msg, envRequireRegistry)
		}
		t.Skip(msg)
	}
	if url == "" {
		unavailable("schema registry test: " + envRegistryURL + ` is not set; run "scripts/registry.sh up && eval \"$(scripts/registry.sh env)\""`)
	}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url + "/subjects")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %s", resp.Status)
		}
	}
	if err != nil {
		unavailable(fmt.Sprintf("schema registry test: %s=%s does not answer GET /subjects: %v; run scripts/registry.sh up", envRegistryURL, url, err))
	}
	return url
}

// interopPython returns the interpreter with Confluent's Python client and
// its Avro serializers.
func interopPython(t *testing.T) string {
	t.Helper()
	return pythontest.Interpreter(t, "confluent_kafka, confluent_kafka.schema_registry.avro, fastavro", "'confluent-kafka[avro,schemaregistry]' fastavro requests")
}

// runPython runs testdata/registry_interop.py and returns its non-empty
// output lines.
func runPython(t *testing.T, py string, stdin io.Reader, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := filepath.Join(repoRoot(t), "test", "e2e", "testdata", "registry_interop.py")
	cmd := exec.CommandContext(ctx, py, append([]string{"-W", "ignore", script}, args...)...)
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("registry_interop.py %s: %v\n%s", args[0], err, stderr.String())
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

// runConnectd runs `connectd run conf`, which must exit 0 on its own.
func runConnectd(t *testing.T, bin, conf string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", conf)
	cmd.Dir = repoRoot(t)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("connectd run %s: %v after %v (want exit 0)\n%s", filepath.Base(conf), err, time.Since(start).Round(time.Millisecond), logs.String())
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// decodeLine parses one JSON object with numbers kept as text.
func decodeLine(t *testing.T, who string, i int, line string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%s row %d is not a JSON object: %v: %s", who, i, err, line)
	}
	return m
}

// checkColumns checks that m has exactly the columns want.
func checkColumns(t *testing.T, who string, i int, line string, m map[string]any, want []string) {
	t.Helper()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(keys, want) {
		t.Errorf("%s row %d has the columns %q, want %q: %s", who, i, keys, want, line)
	}
}

// checkConnectdRow compares a row that connectd decoded and wrote as JSON:
// integers and doubles exactly, the decimal as the same number, the
// timestamp as the same instant (RFC 3339 text), nulls as null.
func checkConnectdRow(t *testing.T, i int, line string, want interopRow) {
	t.Helper()
	got := decodeLine(t, "connectd", i, line)
	checkColumns(t, "connectd", i, line, got, append(slices.Clone(interopKeyColumns), interopValueColumns...))
	c := rowChecker{t: t, who: "connectd", i: i, line: line, got: got}
	c.int("id", &want.id)
	c.str("name", want.name)
	if want.qty != nil {
		c.int("qty", ptr(int64(*want.qty)))
	} else {
		c.int("qty", nil)
	}
	c.decimal("price", want.price, func(v any) (string, bool) {
		n, ok := v.(json.Number)
		return string(n), ok
	}, false)
	c.double("ratio", want.ratio)
	c.boolean("active", want.active)
	c.timestamp("created", want.created, func(v any) (time.Time, bool) {
		s, ok := v.(string)
		if !ok {
			return time.Time{}, false
		}
		ts, err := time.Parse(time.RFC3339Nano, s)
		return ts, err == nil
	})
	c.str("note", want.note)
}

// checkPythonRow compares a row that Python's AvroDeserializer read, as
// registry_interop.py prints it (key and value, each with exactly its
// columns): the decimal as Python's Decimal text (which
// shows the schema's scale, so it must match exactly), the timestamp as
// milliseconds since the epoch.
func checkPythonRow(t *testing.T, i int, line string, want interopRow) {
	t.Helper()
	kv := decodeLine(t, "Python", i, line)
	key, _ := kv["key"].(map[string]any)
	value, _ := kv["value"].(map[string]any)
	checkColumns(t, "Python key of", i, line, key, interopKeyColumns)
	checkColumns(t, "Python value of", i, line, value, interopValueColumns)
	got := map[string]any{}
	maps.Copy(got, value)
	maps.Copy(got, key)
	c := rowChecker{t: t, who: "Python", i: i, line: line, got: got}
	c.int("id", &want.id)
	c.str("name", want.name)
	if want.qty != nil {
		c.int("qty", ptr(int64(*want.qty)))
	} else {
		c.int("qty", nil)
	}
	c.decimal("price", want.price, func(v any) (string, bool) {
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return "", false
		}
		s, ok := m["decimal"].(string)
		return s, ok
	}, true)
	c.double("ratio", want.ratio)
	c.boolean("active", want.active)
	c.timestamp("created", want.created, func(v any) (time.Time, bool) {
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return time.Time{}, false
		}
		n, ok := m["timestamp_ms"].(json.Number)
		if !ok {
			return time.Time{}, false
		}
		ms, err := n.Int64()
		return time.UnixMilli(ms), err == nil
	})
	c.str("note", want.note)
}

type rowChecker struct {
	t    *testing.T
	who  string
	i    int
	line string
	got  map[string]any
}

func (c rowChecker) fail(col string, want any) {
	c.t.Helper()
	c.t.Errorf("%s row %d column %s: got %#v, want %v\n  row: %s", c.who, c.i, col, c.got[col], want, c.line)
}

// null reports whether want is nil; if so, got must be null.
func (c rowChecker) null(col string, wantNil bool) bool {
	c.t.Helper()
	if !wantNil {
		return false
	}
	if c.got[col] != nil {
		c.fail(col, "null")
	}
	return true
}

func (c rowChecker) int(col string, want *int64) {
	c.t.Helper()
	if c.null(col, want == nil) {
		return
	}
	if n, ok := c.got[col].(json.Number); !ok || string(n) != strconv.FormatInt(*want, 10) {
		c.fail(col, *want)
	}
}

func (c rowChecker) str(col string, want *string) {
	c.t.Helper()
	if c.null(col, want == nil) {
		return
	}
	if s, ok := c.got[col].(string); !ok || s != *want {
		c.fail(col, strconv.Quote(*want))
	}
}

func (c rowChecker) boolean(col string, want *bool) {
	c.t.Helper()
	if c.null(col, want == nil) {
		return
	}
	if b, ok := c.got[col].(bool); !ok || b != *want {
		c.fail(col, *want)
	}
}

// double: the same float64, bit for bit (0.1 must stay 0.1).
func (c rowChecker) double(col string, want *float64) {
	c.t.Helper()
	if c.null(col, want == nil) {
		return
	}
	n, ok := c.got[col].(json.Number)
	if !ok {
		c.fail(col, *want)
		return
	}
	if f, err := strconv.ParseFloat(string(n), 64); err != nil || f != *want {
		c.fail(col, *want)
	}
}

// decimal: the same number (exact rationals, no float); with exact, the
// same text too.
func (c rowChecker) decimal(col string, want *string, text func(any) (string, bool), exact bool) {
	c.t.Helper()
	if c.null(col, want == nil) {
		return
	}
	s, ok := text(c.got[col])
	if !ok {
		c.fail(col, *want)
		return
	}
	if exact {
		if s != *want {
			c.fail(col, *want)
		}
		return
	}
	g, ok1 := new(big.Rat).SetString(s)
	w, ok2 := new(big.Rat).SetString(*want)
	if !ok1 || !ok2 || g.Cmp(w) != 0 {
		c.fail(col, *want)
	}
}

func (c rowChecker) timestamp(col string, want *time.Time, parse func(any) (time.Time, bool)) {
	c.t.Helper()
	if c.null(col, want == nil) {
		return
	}
	if ts, ok := parse(c.got[col]); !ok || !ts.Equal(*want) {
		c.fail(col, want.UTC().Format(time.RFC3339Nano))
	}
}

// deleteSubjectsAtCleanup deletes the subjects <topic>-key and
// <topic>-value (soft, then permanently) when the test ends, so that the
// registry, which lives as long as the broker, does not keep them.
func deleteSubjectsAtCleanup(t *testing.T, url, topic string) {
	t.Cleanup(func() {
		c := http.Client{Timeout: 10 * time.Second}
		for _, s := range []string{topic + "-key", topic + "-value"} {
			for _, q := range []string{"", "?permanent=true"} {
				req, err := http.NewRequest(http.MethodDelete, url+"/subjects/"+s+q, nil)
				if err != nil {
					t.Logf("delete subject %s: %v", s, err)
					continue
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Logf("delete subject %s: %v", s, err)
					continue
				}
				resp.Body.Close()
			}
		}
	})
}

// registrySubjects is GET /subjects.
func registrySubjects(t *testing.T, url string) []string {
	t.Helper()
	var subjects []string
	registryGet(t, url+"/subjects", &subjects)
	return subjects
}

// registryLatest is GET /subjects/<subject>/versions/latest: the schema id and text.
func registryLatest(t *testing.T, url, subject string) (int, string) {
	t.Helper()
	var v struct {
		ID     int    `json:"id"`
		Schema string `json:"schema"`
	}
	registryGet(t, url+"/subjects/"+subject+"/versions/latest", &v)
	if v.ID <= 0 || v.Schema == "" {
		t.Fatalf("GET %s/subjects/%s/versions/latest: no id or schema: %+v", url, subject, v)
	}
	return v.ID, v.Schema
}

func registryGet(t *testing.T, url string, into any) {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, body)
	}
}

// sameAvroSchema compares two Avro schemas as JSON values, with a record's
// `namespace` folded into its `name` (the same full name in Avro).
func sameAvroSchema(t *testing.T, a, b string) bool {
	t.Helper()
	parse := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("schema is not JSON: %v: %s", err, s)
		}
		return foldNamespace(v)
	}
	return reflect.DeepEqual(parse(a), parse(b))
}

func foldNamespace(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if ns, ok := x["namespace"].(string); ok {
			if name, ok := x["name"].(string); ok && !strings.Contains(name, ".") && ns != "" {
				x["name"] = ns + "." + name
			}
			delete(x, "namespace")
		}
		for k, e := range x {
			x[k] = foldNamespace(e)
		}
	case []any:
		for i := range x {
			x[i] = foldNamespace(x[i])
		}
	}
	return v
}

// rawRecords reads the first n records of a one-partition topic
// (read_committed).
func rawRecords(t *testing.T, brokers, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s within 30s", len(out), n, topic)
		}
		if err := fs.Err(); err != nil {
			t.Fatalf("reading %s: %v", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}
