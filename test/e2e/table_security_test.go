package e2e

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkatest"
)

// Issue 14's "real client properties": a Flink table whose Kafka client
// properties carry the security settings (the Flink docs' SASL example,
// SASL_SSL with a PEM trust store), and the same through the YAML fields,
// writes and reads on the real broker's SASL, SSL and SASL_SSL listeners
// with the built binary; a wrong password or a wrong CA ends the run with a
// clear error.

// securedRows is how many rows each case writes and reads back.
const securedRows = 25

// jaasConfig is a sasl.jaas.config value as the Flink docs write it.
func jaasConfig(module, user, password string) string {
	class := "org.apache.kafka.common.security.plain.PlainLoginModule"
	if module == "scram" {
		class = "org.apache.kafka.common.security.scram.ScramLoginModule"
	}
	return fmt.Sprintf(`%s required username="%s" password="%s";`, class, user, password)
}

// securedDDL is a kafka table on topic at brokers with extra WITH options
// (each `'k' = 'v'`), json rows (id BIGINT, name STRING), read from the
// earliest offset up to the latest.
func securedDDL(topic, brokers string, extra ...string) string {
	opts := append([]string{"'connector' = 'kafka'", fmt.Sprintf("'topic' = '%s'", topic),
		fmt.Sprintf("'properties.bootstrap.servers' = '%s'", brokers), "'format' = 'json'",
		"'scan.startup.mode' = 'earliest-offset'", "'scan.bounded.mode' = 'latest-offset'"}, extra...)
	return fmt.Sprintf("CREATE TABLE t (id BIGINT, name STRING) WITH (\n  %s\n)", strings.Join(opts, ",\n  "))
}

// yamlBlock indents a multi-line string as a YAML block scalar at indent.
func yamlBlock(s, indent string) string {
	return "|\n" + indent + strings.ReplaceAll(s, "\n", "\n"+indent)
}

// writeThenRead writes securedRows rows through kafka_sink with ddl and
// extra YAML (fields of the component, at its indentation), then reads them
// back through kafka_source with the same, and checks the rows.
func writeThenRead(t *testing.T, ddl, extraYAML string) {
	t.Helper()
	sink := writeFile(t, "sink.yaml", fmt.Sprintf(`
http: { enabled: false }
input:
  generate:
    count: %d
    interval: ""
    mapping: 'root = {"id": counter(), "name": "row-" + counter().string()}'
output:
  kafka_sink:
    ddl: %s
%s`, securedRows, yamlBlock(ddl, "      "), extraYAML))
	logs, code, took := runConfigToExit(t, 90*time.Second, sink)
	t.Logf("write: exit %d after %v", code, took.Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("writing: exit %d:\n%s", code, logs)
	}
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	source := writeFile(t, "source.yaml", fmt.Sprintf(`
http: { enabled: false }
input:
  kafka_source:
    ddl: %s
%s
output:
  file: { path: %q, codec: lines }
`, yamlBlock(ddl, "      "), extraYAML, out))
	logs, code, took = runConfigToExit(t, 90*time.Second, source)
	t.Logf("read: exit %d after %v", code, took.Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("reading: exit %d:\n%s", code, logs)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var row struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("row %q: %v", sc.Text(), err)
		}
		if row.Name != fmt.Sprintf("row-%d", row.ID) {
			t.Errorf("row %q: name does not match id", sc.Text())
		}
		ids = append(ids, row.ID)
	}
	sort.Ints(ids)
	if len(ids) != securedRows || ids[0] != 1 || ids[len(ids)-1] != securedRows {
		t.Fatalf("read %d rows (%v), want ids 1..%d", len(ids), ids, securedRows)
	}
}

func TestTableSecurityProperties(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	saslAddr, user, password := kafkatest.SASL(t)
	l := kafkatest.TLS(t)
	cases := []struct {
		name, brokers string
		props         []string
		yaml          string
	}{
		{"SASL_PLAINTEXT SCRAM-SHA-256 via jaas", saslAddr, []string{
			"'properties.security.protocol' = 'SASL_PLAINTEXT'",
			"'properties.sasl.mechanism' = 'SCRAM-SHA-256'",
			fmt.Sprintf("'properties.sasl.jaas.config' = '%s'", jaasConfig("scram", user, password)),
		}, ""},
		{"SASL_SSL SCRAM-SHA-512 via jaas and a PEM trust store", l.SASLSSL, []string{
			"'properties.security.protocol' = 'SASL_SSL'",
			"'properties.sasl.mechanism' = 'SCRAM-SHA-512'",
			fmt.Sprintf("'properties.sasl.jaas.config' = '%s'", jaasConfig("scram", user, password)),
			"'properties.ssl.truststore.type' = 'PEM'",
			fmt.Sprintf("'properties.ssl.truststore.location' = '%s'", l.CA),
		}, ""},
		{"SASL_SSL through the YAML tls and sasl fields", l.SASLSSL, nil, fmt.Sprintf(`
    tls: { enabled: true, root_cas_file: %q }
    sasl: { mechanism: SCRAM-SHA-256, username: %q, password: %q }
`, l.CA, user, password)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			topic := kafkatest.NewTopic(t, brokers, "e2e-table-secured", 2)
			writeThenRead(t, securedDDL(topic, tc.brokers, tc.props...), tc.yaml)
		})
	}
}

// A wrong password in the table's JAAS config, and a trust store without
// the broker's CA: the run ends with exit 1 and an error naming the problem
// and the option to fix, never the password. kafka_source ends within 10s
// (DESIGN.md contract 9); kafka_sink ends by itself too, once the input has
// waited for its message in flight (three quarters of shutdown_timeout).
func TestTableSecurityRefused(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	saslAddr, user, password := kafkatest.SASL(t)
	l := kafkatest.TLS(t)
	otherCA := writeFile(t, "other-ca.pem", string(otherCAPEM(t)))
	wrong := "not-" + password
	cases := []struct {
		name, brokers string
		props         []string
		wants         []string
		secrets       []string
	}{
		{"wrong password on SASL_PLAINTEXT", saslAddr, []string{
			"'properties.security.protocol' = 'SASL_PLAINTEXT'",
			"'properties.sasl.mechanism' = 'SCRAM-SHA-256'",
			fmt.Sprintf("'properties.sasl.jaas.config' = '%s'", jaasConfig("scram", user, wrong)),
		}, []string{"connectd: the run stopped:", "SASL_AUTHENTICATION_FAILED", "mechanism SCRAM-SHA-256", fmt.Sprintf("user %q", user),
			"option 'properties.sasl.jaas.config'"}, []string{wrong}},
		{"wrong password on SASL_SSL", l.SASLSSL, []string{
			"'properties.security.protocol' = 'SASL_SSL'",
			"'properties.sasl.mechanism' = 'SCRAM-SHA-512'",
			fmt.Sprintf("'properties.sasl.jaas.config' = '%s'", jaasConfig("scram", user, wrong)),
			"'properties.ssl.truststore.type' = 'PEM'",
			fmt.Sprintf("'properties.ssl.truststore.location' = '%s'", l.CA),
		}, []string{"connectd: the run stopped:", "SASL_AUTHENTICATION_FAILED", "mechanism SCRAM-SHA-512", fmt.Sprintf("user %q", user),
			"option 'properties.sasl.jaas.config'"}, []string{wrong}},
		{"wrong CA", l.SASLSSL, []string{
			"'properties.security.protocol' = 'SASL_SSL'",
			"'properties.sasl.mechanism' = 'SCRAM-SHA-512'",
			fmt.Sprintf("'properties.sasl.jaas.config' = '%s'", jaasConfig("scram", user, password)),
			"'properties.ssl.truststore.type' = 'PEM'",
			fmt.Sprintf("'properties.ssl.truststore.location' = '%s'", otherCA),
		}, []string{"connectd: the run stopped:", "TLS handshake with kafka at [" + l.SASLSSL + "] failed",
			"the broker's certificate is not signed by an authority this client trusts", "x509: certificate signed by unknown authority",
			"'properties.ssl.*' of table t"}, []string{password}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			topic := kafkatest.NewTopic(t, brokers, "e2e-table-refused", 1)
			ddl := yamlBlock(securedDDL(topic, tc.brokers, tc.props...), "      ")
			for _, side := range []struct {
				name, config string
				limit        time.Duration
			}{
				{"kafka_source", fmt.Sprintf("http: { enabled: false }\ninput:\n  kafka_source:\n    ddl: %s\noutput:\n  drop: {}\n", ddl), 10 * time.Second},
				{"kafka_sink", fmt.Sprintf("http: { enabled: false }\ninput:\n  generate:\n    count: 1\n    interval: \"\"\n"+
					"    mapping: 'root = {\"id\": 1}'\noutput:\n  kafka_sink:\n    ddl: %s\n", ddl), 30 * time.Second},
			} {
				logs, code, took := runConfigToExit(t, time.Minute, writeFile(t, side.name+".yaml", side.config))
				t.Logf("%s: exit %d after %v", side.name, code, took.Round(time.Millisecond))
				if code != 1 {
					t.Errorf("%s: exit code %d, want 1:\n%s", side.name, code, logs)
				}
				if took > side.limit {
					t.Errorf("%s: the run took %v to end, want at most %v", side.name, took.Round(time.Millisecond), side.limit)
				}
				for _, w := range tc.wants {
					if !strings.Contains(logs, w) {
						t.Errorf("%s: output lacks %q:\n%s", side.name, w, logs)
					}
				}
				for _, s := range tc.secrets {
					if strings.Contains(logs, s) {
						t.Errorf("%s: output shows a password:\n%s", side.name, logs)
					}
				}
			}
		})
	}
}

// otherCAPEM is the PEM certificate of a new CA that signed nothing the
// broker holds.
func otherCAPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "not the broker's CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
