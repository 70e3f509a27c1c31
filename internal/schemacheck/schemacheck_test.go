package schemacheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema/compat"
	"github.com/connectd/connectd/schema/registry/registrytest"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// ddl is a Kafka table of columns in avro-confluent (value) and, with
// keyed, an avro-confluent key of column id.
func ddl(url, topicOpt, columns string, keyed bool) string {
	key := ""
	if keyed {
		key = fmt.Sprintf(`'key.format' = 'avro-confluent', 'key.avro-confluent.url' = '%s', 'key.fields' = 'id',`, url)
	}
	return fmt.Sprintf(`CREATE TABLE orders (%s) WITH ('connector' = 'kafka', %s 'properties.bootstrap.servers' = 'k:9092',
  %s 'value.format' = 'avro-confluent', 'value.avro-confluent.url' = '%s')`, columns, topicOpt, key, url)
}

func TestCheck(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	reg.SetCompatibility("", compat.Backward, false)
	ctx := context.Background()

	// Nothing registered yet: compatible, and the schemas to register.
	v1 := write(t, "v1.sql", ddl(reg.URL(), `'topic' = 'orders',`, "id BIGINT NOT NULL, name STRING", true))
	res, err := Check(ctx, []string{v1}, Options{})
	if err != nil || len(res) != 2 || res[0].Part != "key" || res[1].Part != "value" || res[1].Subject != "orders-value" || res[0].Subject != "orders-key" {
		t.Fatalf("v1: %v %v", res, err)
	}
	for _, r := range res {
		if r.Err != nil || !strings.Contains(r.String(), "no version registered yet") {
			t.Fatalf("v1: %s", r)
		}
	}
	// Register v1's value schema as a run would.
	codecSchema := func(path string) string {
		tables, err := tablesOf(path)
		if err != nil {
			t.Fatal(err)
		}
		return codecOf(t, tables[0]).Schema
	}
	reg.Add("orders-value", "", codecSchema(v1))

	// In a YAML config: an incompatible change names the field.
	cfg := write(t, "v2.yaml", fmt.Sprintf("output:\n  kafka_sink:\n    ddl: %q\n", ddl(reg.URL(), `'topic' = 'orders',`, "id BIGINT NOT NULL, name STRING, qty INT NOT NULL", false)))
	res, err = Check(ctx, []string{cfg}, Options{})
	if err != nil || len(res) != 1 {
		t.Fatalf("v2: %v %v", res, err)
	}
	if !errors.Is(res[0].Err, compat.ErrIncompatible) || !strings.Contains(res[0].String(), "field qty") ||
		!strings.Contains(res[0].String(), "output.kafka_sink") || res[0].Level != "BACKWARD" || res[0].Versions != 1 {
		t.Fatalf("v2: %s", res[0])
	}

	// --registry replaces the table's URL: an empty registry has nothing.
	other := registrytest.New()
	defer other.Close()
	res, err = Check(ctx, []string{cfg}, Options{Registry: other.URL()})
	if err != nil || len(res) != 1 || res[0].Err != nil || res[0].Versions != 0 {
		t.Fatalf("--registry: %v %v", res, err)
	}

	// A topic-pattern without 'subject': not checked, and said so.
	pat := write(t, "pattern.sql", ddl(reg.URL(), `'topic-pattern' = 'orders.*',`, "id BIGINT NOT NULL", false))
	res, err = Check(ctx, []string{pat}, Options{})
	if err != nil || len(res) != 1 || res[0].Subject != "" || !strings.Contains(res[0].String(), "not checked") {
		t.Fatalf("topic-pattern: %v %v", res, err)
	}

	// A table that does not resolve is an error naming the file.
	bad := write(t, "bad.yaml", "output:\n  kafka_sink:\n    ddl: 'CREATE TABLE ('\n")
	if _, err := Check(ctx, []string{bad}, Options{}); err == nil || !strings.Contains(err.Error(), "bad.yaml: output.kafka_sink") {
		t.Fatalf("bad table: %v", err)
	}
}

// codecOf returns the value schema of a table.
func codecOf(t *testing.T, st sourcedTable) registrySchema {
	t.Helper()
	c, err := table.NewCodec(st.table)
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range c.RegistrySchemas() {
		if rs.Part == "value" {
			return registrySchema{Schema: rs.Schema}
		}
	}
	t.Fatal("no value schema")
	return registrySchema{}
}

type registrySchema struct{ Schema string }
