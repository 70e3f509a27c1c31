package schema_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/schema"
)

func TestValidateOptions(t *testing.T) {
	t.Parallel()
	base := `CREATE TABLE t (id BIGINT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', name STRING) WITH (%s)`
	for _, tc := range []struct {
		name, opts string
		want       []string // substrings of the error; none: valid
	}{
		{"minimal kafka", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json'`, nil},
		{"no connector, format only", `'format' = 'csv', 'csv.field-delimiter' = '\t', 'csv.null-literal' = 'n/a'`, nil},
		{"json options", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'json.ignore-parse-errors' = 'true',
			'json.timestamp-format.standard' = 'ISO-8601', 'json.map-null-key.mode' = 'LITERAL', 'json.map-null-key.literal' = 'n',
			'json.fail-on-missing-field' = 'false', 'json.encode.decimal-as-plain-number' = 'true'`, nil},
		{"value.format prefix", `'connector' = 'kafka', 'topic' = 'a', 'value.format' = 'json', 'value.json.ignore-parse-errors' = 'true',
			'key.format' = 'raw', 'key.fields' = 'name', 'key.raw.charset' = 'UTF-8'`, nil},
		{"unknown option", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'sink.parallelism' = '4'`,
			[]string{"option 'sink.parallelism' is not supported by connectd for connector 'kafka'"}},
		{"refused property", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'properties.partitioner.class' = 'com.example.P'`,
			[]string{"option 'properties.partitioner.class' is not supported by connectd: a Java class, which connectd cannot load; use option 'sink.partitioner'"}},
		{"unknown property", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'properties.max.poll.recrods' = '4'`,
			[]string{"option 'properties.max.poll.recrods' is not a Kafka client property connectd knows"}},
		{"Flink docs SASL example", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'properties.security.protocol' = 'SASL_PLAINTEXT',
			'properties.sasl.mechanism' = 'PLAIN', 'properties.sasl.jaas.config' = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";'`, nil},
		{"tuning properties", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'properties.fetch.min.bytes' = '1024', 'properties.fetch.max.wait.ms' = '100',
			'properties.transaction.timeout.ms' = '900000', 'properties.isolation.level' = 'READ_COMMITTED', 'properties.compression.type' = 'zstd', 'properties.acks' = '-1'`, nil},
		{"property values", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'properties.fetch.min.bytes' = '3000000000',
			'properties.linger.ms' = '-1', 'properties.isolation.level' = 'serializable', 'properties.security.protocol' = 'TLS'`,
			[]string{"option 'properties.fetch.min.bytes' = '3000000000': want a positive integer up to 2147483647",
				"option 'properties.linger.ms' = '-1': want an integer >= 0",
				"option 'properties.isolation.level' = 'serializable': want one of 'read_committed', 'read_uncommitted'",
				"option 'properties.security.protocol' = 'TLS': want one of 'PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'"}},
		{"secret values are masked", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'properties.sasl.jaas.config' = ' '`,
			[]string{"option 'properties.sasl.jaas.config' = '(secret)'"}},
		{"refused prefix", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'properties.sasl.kerberos.service.name' = 'kafka'`,
			[]string{"option 'properties.sasl.kerberos.service.name' is not supported by connectd: Kerberos (GSSAPI) is not supported"}},
		{"option of another format", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'csv.field-delimiter' = ';'`,
			[]string{"option 'csv.field-delimiter' is not supported"}},
		{"unknown format option", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'json.fail-fast' = 'true'`,
			[]string{"option 'json.fail-fast' is not supported"}},
		{"bad values", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'json.ignore-parse-errors' = 'yes',
			'scan.startup.mode' = 'earliest', 'scan.topic-partition-discovery.interval' = 'soon', 'sink.partitioner' = 'hash'`,
			[]string{"'json.ignore-parse-errors' = 'yes': want true or false", "'scan.startup.mode' = 'earliest': want one of earliest-offset",
				"'scan.topic-partition-discovery.interval' = 'soon'", "'sink.partitioner' = 'hash'"}},
		{"unknown format", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'thrift'`, []string{"'format' = 'thrift': unknown format"}},
		{"unknown connector", `'connector' = 'jdbc'`, []string{"unknown connector"}},
		{"no format", `'connector' = 'kafka', 'topic' = 'a'`, []string{"option 'format' (or 'value.format') is required"}},
		{"topic and pattern", `'connector' = 'kafka', 'topic' = 'a', 'topic-pattern' = 'a.*', 'format' = 'json'`, []string{"alternatives"}},
		{"timestamp mode", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'scan.startup.mode' = 'timestamp'`,
			[]string{"'scan.startup.timestamp-millis' goes with"}},
		{"key fields", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'key.format' = 'json', 'key.fields' = 'id;nope'`,
			[]string{`'key.fields': "nope" is not a physical column`}},
		{"specific offsets", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'scan.startup.mode' = 'specific-offsets',
			'scan.startup.specific-offsets' = 'partition:0,offset:42;partition:1,offset:300'`, nil},
		{"bad specific offsets", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'scan.bounded.mode' = 'specific-offsets',
			'scan.bounded.specific-offsets' = 'p0:42'`, []string{`want entries like partition:0,offset:42 separated by semicolons, got "p0:42"`}},
		{"exactly once", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once'`,
			[]string{"needs 'sink.transactional-id-prefix'"}},
		{"upsert needs pk", `'connector' = 'upsert-kafka', 'topic' = 'a', 'key.format' = 'json', 'value.format' = 'json'`,
			[]string{"upsert-kafka needs a PRIMARY KEY"}},
		{"upsert buffer flush", `'connector' = 'upsert-kafka', 'topic' = 'a', 'key.format' = 'json', 'value.format' = 'json', 'sink.buffer-flush.max-rows' = '100'`,
			[]string{"upsert-kafka needs a PRIMARY KEY", "'sink.buffer-flush.max-rows' and 'sink.buffer-flush.interval' go together"}},
		{"prefix needs except key", `'connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'key.format' = 'json', 'key.fields' = 'id', 'key.fields-prefix' = 'k_'`,
			[]string{"'key.fields-prefix' needs 'value.fields-include' = 'EXCEPT_KEY'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tables, err := schema.ParseDDL(strings.Replace(base, "%s", tc.opts, 1))
			if err != nil {
				t.Fatal(err)
			}
			err = tables[0].Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want errors %q, got none", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// A PRIMARY KEY on the kafka connector forms the Kafka key (kafkakey.go).
func TestPrimaryKeyOnKafka(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, ddl string
		keyFormat string // "" with want: an error
		want      string
	}{
		{"string pk defaults to raw", `CREATE TABLE t (id STRING, v DOUBLE, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'kafka', 'topic' = 'a', 'format' = 'json')`, "raw", ""},
		{"explicit key format", `CREATE TABLE t (a INT, b INT, v DOUBLE, PRIMARY KEY (a, b) NOT ENFORCED) WITH ('connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'key.format' = 'json')`, "json", ""},
		{"composite pk needs key format", `CREATE TABLE t (a INT, b INT, PRIMARY KEY (a, b) NOT ENFORCED) WITH ('connector' = 'kafka', 'topic' = 'a', 'format' = 'json')`, "",
			"option 'key.format' is required: the PRIMARY KEY columns (a, b) form the Kafka key"},
		{"key fields differ", `CREATE TABLE t (a STRING, b STRING, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'key.format' = 'raw', 'key.fields' = 'b')`, "",
			"option 'key.fields' = 'b' differs from the PRIMARY KEY (a)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tables, err := schema.ParseDDL(tc.ddl)
			if err != nil {
				t.Fatal(err)
			}
			err = tables[0].Validate()
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("want %q, got %v", tc.want, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if name, _, ok := tables[0].KeyFormatOf(); !ok || name != tc.keyFormat {
				t.Fatalf("key format %q %v, want %q", name, ok, tc.keyFormat)
			}
		})
	}
}

func TestValidateColumns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, ddl, want string }{
		{"unknown metadata", `CREATE TABLE t (a INT METADATA FROM 'key') WITH ('format' = 'json')`, `unknown metadata key "key"`},
		{"metadata type", `CREATE TABLE t (a STRING METADATA FROM 'offset') WITH ('format' = 'json')`, `metadata "offset" cannot be declared as STRING`},
		{"decimal precision", `CREATE TABLE t (a DECIMAL(40, 2)) WITH ('format' = 'json')`, "DECIMAL precision must be between 1 and 38"},
		{"decimal scale", `CREATE TABLE t (a DECIMAL(5, 6)) WITH ('format' = 'json')`, "DECIMAL scale must be between 0 and the precision 5"},
		{"timestamp precision", `CREATE TABLE t (a TIMESTAMP(10)) WITH ('format' = 'json')`, "precision must be between 0 and 9"},
		{"watermark type", `CREATE TABLE t (a TIMESTAMP(6), WATERMARK FOR a AS a) WITH ('format' = 'json')`, "with p <= 3"},
		{"watermark column", `CREATE TABLE t (a INT, WATERMARK FOR b AS b) WITH ('format' = 'json')`, "WATERMARK FOR b: no such column"},
		{"pk column", `CREATE TABLE t (a INT, PRIMARY KEY (b) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'x', 'key.format' = 'json', 'value.format' = 'json')`, "PRIMARY KEY column b is not a column"},
		{"duplicate column", `CREATE TABLE t (a INT, a STRING) WITH ('format' = 'json')`, "column a is declared twice"},
		{"map key", `CREATE TABLE t (a MAP<INT, STRING>) WITH ('format' = 'json')`, "MAP keys must be a character string type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tables, err := schema.ParseDDL(tc.ddl)
			if err != nil {
				t.Fatal(err)
			}
			if err := tables[0].Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
}

func TestUpsertKafkaValid(t *testing.T) {
	t.Parallel()
	tables, err := schema.ParseDDL(`CREATE TABLE pageviews_per_region (
  user_region STRING,
  pv BIGINT,
  PRIMARY KEY (user_region) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'pageviews_per_region',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'csv',
  'value.format' = 'json',
  'value.fields-include' = 'EXCEPT_KEY'
)`)
	if err != nil {
		t.Fatal(err)
	}
	if err := tables[0].Validate(); err != nil {
		t.Fatal(err)
	}
}

// The seed's two CREATE TABLE statements (issue 5's article) live once, in
// testdata/seed.sql: this package's tests read it, and tests elsewhere read
// it by its path from the module root. config/tables.sql, the example
// catalog of the config/table_*.yaml pipelines, holds the same statements
// under the names those pipelines use (and ends them with semicolons):
// user_events is the seed's kafka_source, device_metrics its kafka_sink.
func TestExampleCatalogHoldsTheSeed(t *testing.T) {
	t.Parallel()
	byName := func(path string) map[string]*schema.Table {
		t.Helper()
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*schema.Table{}
		for _, tb := range parseOK(t, string(src)) {
			out[tb.Name] = tb
		}
		return out
	}
	seed, example := byName("testdata/seed.sql"), byName("../config/tables.sql")
	if len(seed) != 2 {
		t.Fatalf("testdata/seed.sql holds %d tables, want the seed's two", len(seed))
	}
	for exampleName, seedName := range map[string]string{"user_events": "kafka_source", "device_metrics": "kafka_sink"} {
		ex, ok := example[exampleName]
		if !ok {
			t.Errorf("config/tables.sql has no table %s (the seed's %s)", exampleName, seedName)
			continue
		}
		renamed := *ex
		renamed.Name = seedName
		if got, want := renderDDL(&renamed), renderDDL(seed[seedName]); got != want {
			t.Errorf("config/tables.sql's %s is not the seed's %s:\n%s\nwant (testdata/seed.sql):\n%s", exampleName, seedName, got, want)
		}
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	yamlPath := filepath.Join(dir, "tables.yaml")
	if err := os.WriteFile(yamlPath, []byte(`
tables:
  - name: orders
    columns:
      - { name: id, type: BIGINT }
      - { name: amount, type: "DECIMAL(10, 2)" }
      - { name: ts, type: TIMESTAMP_LTZ(3), metadata: timestamp, virtual: true }
    watermark: { column: ts, delay: 5 s }
    options: { connector: kafka, topic: orders, format: json }
  - name: sales.db.refunds
    columns: [ { name: id, type: BIGINT } ]
    options: { format: csv }
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cat, err := schema.LoadCatalog(yamlPath)
	if err != nil {
		t.Fatal(err)
	}
	orders, err := cat.Table("orders")
	if err != nil {
		t.Fatal(err)
	}
	if ts, _ := orders.Column("ts"); ts.Kind != schema.Metadata || ts.MetadataKey != "timestamp" || orders.Watermark.Delay.Seconds() != 5 {
		t.Fatalf("orders = %+v", orders)
	}
	if _, err := cat.Table("refunds"); err != nil {
		t.Fatalf("lookup by the last part of a qualified name: %v", err)
	}
	if _, err := cat.Table("nope"); err == nil || !strings.Contains(err.Error(), "no table nope (tables: orders, sales.db.refunds)") {
		t.Fatalf("unknown table: %v", err)
	}

	// The YAML form and the DDL describe the same table.
	sqlCat, err := schema.LoadCatalog("testdata/seed.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlCat.Table("kafka_sink"); err != nil {
		t.Fatalf("kafka_sink: a PRIMARY KEY on plain kafka is the Kafka key: %v", err)
	}
	src, err := sqlCat.Table("kafka_source")
	if err != nil {
		t.Fatal(err)
	}
	ty := src.YAML()
	back, err := ty.Table()
	if err != nil {
		t.Fatal(err)
	}
	if back.Watermark.Delay != src.Watermark.Delay || back.Columns[1].Type.String() != "TIMESTAMP(3)" || back.Options["topic"] != "user_events" {
		t.Fatalf("YAML round trip: %+v", back)
	}

	// YAML errors name the column; unknown keys are refused.
	if _, err := schema.ParseTableYAML([]byte("name: x\ncolumns: [ { name: a, type: \"DECIMAL(\" } ]")); err == nil || !strings.Contains(err.Error(), "column a: type") {
		t.Fatalf("bad type: %v", err)
	}
	if _, err := schema.ParseTableYAML([]byte("name: x\ncolums: []")); err == nil || !strings.Contains(err.Error(), "colums") {
		t.Fatalf("unknown key: %v", err)
	}
}
