package kafkaconn

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/schema"
)

// jaasOf is a sasl.jaas.config value of module (plain or scram) for user and
// password.
func jaasOf(module, user, password string) string {
	class := jaasPlain
	if module == "scram" {
		class = jaasScram
	}
	return fmt.Sprintf(`%s required username="%s" password="%s";`, class, user, password)
}

// fromTable reads the connection fields of yaml with table t's brokers and
// properties applied, as kafka_source and kafka_sink do.
func fromTable(t *testing.T, yaml string, brokers string, props map[string]string) (Config, error) {
	t.Helper()
	pConf, err := service.NewConfigSpec().Fields(Fields()...).ParseYAML(yaml, nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return FromParsedTable(pConf, TableConn{Table: "t", Brokers: []string{brokers}, Properties: props})
}

// connectWithin connects and closes, failing the test if connecting took
// longer than limit (a refused certificate must not hang).
func connectWithin(t *testing.T, c Config, limit time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*limit)
	defer cancel()
	began := time.Now()
	cl, err := NewConnector(c).Connect(ctx)
	if took := time.Since(began); took > limit {
		t.Errorf("connecting took %v, want at most %v (err %v)", took.Round(time.Millisecond), limit, err)
	}
	if err == nil {
		cl.Close()
	}
	return err
}

// The broker's SSL and SASL_SSL listeners accept connectd with the trust
// and credentials given the Flink way (a table's properties.*) and the
// Benthos way (YAML fields), from a PEM file, inline PEM, and the PKCS12 and
// JKS trust stores Java's keytool wrote.
func TestTLSRealBroker(t *testing.T) {
	l := kafkatest.TLS(t)
	_, user, password := kafkatest.SASL(t)
	caPEM, err := os.ReadFile(l.CA)
	if err != nil {
		t.Fatal(err)
	}
	pemStore := map[string]string{schema.PropTrustStoreType: "PEM", schema.PropTrustStoreLocation: l.CA}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	cases := []struct {
		name    string
		yaml    string
		brokers string
		props   map[string]string
	}{
		{"properties SSL, PEM file", "", l.SSL, with(pemStore, schema.PropSecurityProtocol, "SSL")},
		{"properties SASL_SSL SCRAM-SHA-256, PEM file", "", l.SASLSSL, with(pemStore, schema.PropSecurityProtocol, "SASL_SSL",
			schema.PropSASLMechanism, "SCRAM-SHA-256", schema.PropSASLJAASConfig, jaasOf("scram", user, password))},
		{"properties SASL_SSL PLAIN, inline PEM", "", l.SASLSSL, map[string]string{schema.PropSecurityProtocol: "sasl_ssl",
			schema.PropSASLMechanism: "PLAIN", schema.PropSASLJAASConfig: jaasOf("plain", user, password),
			schema.PropTrustStoreType: "PEM", schema.PropTrustStoreCertificates: string(caPEM)}},
		{"properties SSL, JKS from keytool", "", l.SSL, map[string]string{schema.PropSecurityProtocol: "SSL",
			schema.PropTrustStoreLocation: l.JKS, schema.PropTrustStorePassword: l.StorePassword}}, // JKS: Kafka's default type
		{"properties SSL, PKCS12 from keytool", "", l.SSL, map[string]string{schema.PropSecurityProtocol: "SSL",
			schema.PropTrustStoreType: "PKCS12", schema.PropTrustStoreLocation: l.PKCS12, schema.PropTrustStorePassword: l.StorePassword}},
		{"YAML tls and sasl SCRAM-SHA-512", fmt.Sprintf(`
tls: { enabled: true, root_cas_file: %q }
sasl: { mechanism: SCRAM-SHA-512, username: %q, password: %q }
`, l.CA, user, password), l.SASLSSL, nil},
		{"YAML tls_truststore PKCS12", fmt.Sprintf(`
tls: { enabled: true }
tls_truststore: { type: PKCS12, file: %q, password: %q }
`, l.PKCS12, l.StorePassword), l.SSL, nil},
		{"YAML tls_truststore JKS, no host name check", fmt.Sprintf(`
tls: { enabled: true }
tls_truststore: { type: JKS, file: %q, password: %q }
tls_verify_hostname: false
`, l.JKS, l.StorePassword), l.SSL, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := fromTable(t, tc.yaml, tc.brokers, tc.props)
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			if c.TLS == nil {
				t.Fatal("TLS is not on")
			}
			if err := connectWithin(t, c, 20*time.Second); err != nil {
				t.Fatalf("connect: %v", err)
			}
		})
	}
}

// A trust store without the CA that signed the broker's certificate: the
// connect fails at once, permanently, with the certificate problem in words
// and the settings to fix (the table's options, or the YAML field).
func TestTLSWrongCARealBroker(t *testing.T) {
	l := kafkatest.TLS(t)
	_, user, password := kafkatest.SASL(t)
	other := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(other, selfSignedCA(t, "not the broker's CA"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, yaml, brokers string
		props               map[string]string
		names               []string
	}{
		{"properties", "", l.SASLSSL, map[string]string{schema.PropSecurityProtocol: "SASL_SSL", schema.PropSASLMechanism: "SCRAM-SHA-512",
			schema.PropSASLJAASConfig: jaasOf("scram", user, password), schema.PropTrustStoreType: "PEM", schema.PropTrustStoreLocation: other},
			[]string{"'properties.security.protocol'", "'properties.ssl.*' of table t"}},
		{"YAML", fmt.Sprintf("tls: { enabled: true, root_cas_file: %q }\n", other), l.SSL, nil, []string{"field tls"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := fromTable(t, tc.yaml, tc.brokers, tc.props)
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			err = connectWithin(t, c, 10*time.Second)
			if err == nil {
				t.Fatal("a broker certificate from another CA was accepted")
			}
			if cl := Classify(err); cl != Permanent {
				t.Errorf("class %v, want permanent: %v", cl, err)
			}
			msg := err.Error()
			for _, want := range append([]string{"TLS handshake with kafka at [" + tc.brokers + "] failed",
				"not signed by an authority this client trusts", "certificate signed by unknown authority"}, tc.names...) {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q: %s", want, msg)
				}
			}
			if strings.Contains(msg, password) {
				t.Errorf("error leaks the password: %s", msg)
			}
		})
	}
}

// A wrong password in properties.sasl.jaas.config over SASL_SSL: the
// existing clear error (mechanism, user), naming the table's option and
// never the password.
func TestJAASWrongPasswordRealBroker(t *testing.T) {
	l := kafkatest.TLS(t)
	_, user, password := kafkatest.SASL(t)
	wrong := "not-" + password
	c, err := fromTable(t, "", l.SASLSSL, map[string]string{schema.PropSecurityProtocol: "SASL_SSL",
		schema.PropSASLMechanism: "SCRAM-SHA-256", schema.PropSASLJAASConfig: jaasOf("scram", user, wrong),
		schema.PropTrustStoreType: "PEM", schema.PropTrustStoreLocation: l.CA})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	err = connectWithin(t, c, 20*time.Second)
	if err == nil {
		t.Fatal("a wrong password was accepted")
	}
	if !IsAuthError(err) || Classify(err) != Permanent {
		t.Errorf("want a permanent authentication error, got class %v: %v", Classify(err), err)
	}
	msg := err.Error()
	for _, want := range []string{"mechanism SCRAM-SHA-256", fmt.Sprintf("user %q", user), "'properties.sasl.jaas.config'", "of table t"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, wrong) {
		t.Errorf("error leaks the password: %s", msg)
	}
}
