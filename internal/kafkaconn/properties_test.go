package kafkaconn

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/schema"
)

// A table's connection properties set the connection as the Java client
// reads them, and every contradiction with a written YAML field, and every
// property the security protocol leaves unused, is an error naming both
// sides; passwords never appear.
func TestTableProperties(t *testing.T) {
	t.Parallel()
	ca := writeTemp(t, "ca.pem", selfSignedCA(t, "ca"))
	otherCA := writeTemp(t, "other.pem", selfSignedCA(t, "other"))
	scram := jaasOf("scram", "alice", "hunter2")
	cases := []struct {
		name    string
		yaml    string
		props   map[string]string
		check   func(t *testing.T, c Config)
		wantErr []string
	}{
		{name: "SASL_PLAINTEXT SCRAM from the JAAS config",
			props: map[string]string{schema.PropSecurityProtocol: "SASL_PLAINTEXT", schema.PropSASLMechanism: "scram-sha-512", schema.PropSASLJAASConfig: scram},
			check: func(t *testing.T, c Config) {
				if c.SASL.Mechanism != MechanismScramSHA512 || c.SASL.Username != "alice" || c.SASL.Password != "hunter2" || c.TLS != nil {
					t.Errorf("sasl %+v, tls %v", c.SASL, c.TLS != nil)
				}
			}},
		{name: "SSL with a PEM trust store, timeouts and client id",
			props: map[string]string{schema.PropSecurityProtocol: "SSL", schema.PropTrustStoreType: "PEM", schema.PropTrustStoreLocation: ca,
				schema.PropClientID: "flink-job", schema.PropRequestTimeoutMs: "2500", schema.PropMetadataMaxAgeMs: "60000",
				schema.PropConnectionsMaxIdleMs: "0"},
			check: func(t *testing.T, c Config) {
				if c.TLS == nil || c.TLS.RootCAs == nil || c.TLS.InsecureSkipVerify {
					t.Fatalf("tls %+v", c.TLS)
				}
				if c.SASL.on() || c.ClientID != "flink-job" || c.RequestTimeout != 2500*time.Millisecond || c.MetadataMaxAge != time.Minute || c.ConnIdleTimeout != 0 {
					t.Errorf("config %+v", c)
				}
			}},
		{name: "YAML fields equal to the properties",
			yaml: "client_id: flink-job\nsasl: { mechanism: PLAIN, username: alice, password: hunter2 }\ntls: { enabled: true, root_cas_file: " + ca + " }\n",
			props: map[string]string{schema.PropSecurityProtocol: "SASL_SSL", schema.PropSASLMechanism: "PLAIN", schema.PropClientID: "flink-job",
				schema.PropSASLJAASConfig: jaasOf("plain", "alice", "hunter2"), schema.PropTrustStoreType: "PEM", schema.PropTrustStoreLocation: ca},
			check: func(t *testing.T, c Config) {
				if c.TLS == nil || c.SASL.Mechanism != MechanismPlain {
					t.Errorf("config %+v", c)
				}
			}},
		{name: "no host name check keeps the chain check",
			props: map[string]string{schema.PropSecurityProtocol: "SSL", schema.PropEndpointIdentification: ""},
			check: func(t *testing.T, c Config) {
				if c.TLS == nil || !c.TLS.InsecureSkipVerify || c.TLS.VerifyConnection == nil {
					t.Errorf("tls %+v", c.TLS)
				}
			}},
		{name: "mechanism contradicts the field",
			yaml:    "sasl: { mechanism: PLAIN, username: alice, password: hunter2 }\n",
			props:   map[string]string{schema.PropSecurityProtocol: "SASL_PLAINTEXT", schema.PropSASLMechanism: "SCRAM-SHA-256", schema.PropSASLJAASConfig: scram},
			wantErr: []string{"field sasl.mechanism: PLAIN contradicts option 'properties.sasl.mechanism' = 'SCRAM-SHA-256' of table t"}},
		{name: "password contradicts the field, shown as secret",
			yaml:    "sasl: { mechanism: SCRAM-SHA-256, username: alice, password: other-pass }\n",
			props:   map[string]string{schema.PropSecurityProtocol: "SASL_PLAINTEXT", schema.PropSASLMechanism: "SCRAM-SHA-256", schema.PropSASLJAASConfig: scram},
			wantErr: []string{"field sasl.password: (secret) contradicts option 'properties.sasl.jaas.config' = '(secret)' of table t"}},
		{name: "PLAINTEXT contradicts tls",
			yaml:    "tls: { enabled: true }\n",
			props:   map[string]string{schema.PropSecurityProtocol: "PLAINTEXT"},
			wantErr: []string{"field tls.enabled: true contradicts option 'properties.security.protocol' = 'PLAINTEXT' of table t"}},
		{name: "SSL contradicts sasl",
			yaml:    "sasl: { mechanism: PLAIN, username: alice, password: hunter2 }\n",
			props:   map[string]string{schema.PropSecurityProtocol: "SSL"},
			wantErr: []string{"field sasl.mechanism: PLAIN contradicts option 'properties.security.protocol' = 'SSL' of table t"}},
		{name: "ssl.* without TLS and sasl.* without SASL, as the Java client would ignore them",
			props: map[string]string{schema.PropTrustStoreLocation: ca, schema.PropSASLJAASConfig: scram},
			wantErr: []string{"field tls: table t: option 'properties.ssl.truststore.location': needs 'properties.security.protocol' = 'SSL' or 'SASL_SSL'",
				"field sasl: table t: option 'properties.sasl.jaas.config': needs 'properties.security.protocol' = 'SASL_PLAINTEXT' or 'SASL_SSL'"}},
		{name: "SASL_SSL without a mechanism (Kafka's default is GSSAPI)",
			props:   map[string]string{schema.PropSecurityProtocol: "SASL_SSL"},
			wantErr: []string{"'SASL_SSL' needs a SASL mechanism: set 'properties.sasl.mechanism' (Kafka's default, GSSAPI, is not supported by connectd)"}},
		{name: "JAAS module of another mechanism",
			props:   map[string]string{schema.PropSecurityProtocol: "SASL_PLAINTEXT", schema.PropSASLMechanism: "PLAIN", schema.PropSASLJAASConfig: scram},
			wantErr: []string{"option 'properties.sasl.jaas.config': login module org.apache.kafka.common.security.scram.ScramLoginModule does not go with SASL mechanism PLAIN"}},
		{name: "client id contradicts the field",
			yaml:    "client_id: mine\n",
			props:   map[string]string{schema.PropClientID: "flink-job"},
			wantErr: []string{"field client_id: mine contradicts option 'properties.client.id' = 'flink-job' of table t"}},
		{name: "request timeout contradicts the field",
			yaml:    "request_timeout_overhead: 3s\n",
			props:   map[string]string{schema.PropRequestTimeoutMs: "2500"},
			wantErr: []string{"field request_timeout_overhead: 3s contradicts option 'properties.request.timeout.ms' = '2500' of table t"}},
		{name: "trust store contradicts root_cas_file",
			yaml:    "tls: { enabled: true, root_cas_file: " + otherCA + " }\n",
			props:   map[string]string{schema.PropSecurityProtocol: "SSL", schema.PropTrustStoreType: "PEM", schema.PropTrustStoreLocation: ca},
			wantErr: []string{"field tls.root_cas_file: \"" + otherCA + "\" contradicts option 'properties.ssl.truststore.location'"}},
		{name: "https contradicts tls_verify_hostname false",
			yaml:    "tls: { enabled: true }\ntls_verify_hostname: false\n",
			props:   map[string]string{schema.PropSecurityProtocol: "SSL", schema.PropEndpointIdentification: "https"},
			wantErr: []string{"field tls_verify_hostname: false contradicts option 'properties.ssl.endpoint.identification.algorithm' = 'https'"}},
		{name: "JKS trust store without its password (Kafka's default type)",
			props:   map[string]string{schema.PropSecurityProtocol: "SSL", schema.PropTrustStoreLocation: ca},
			wantErr: []string{"field tls: option 'properties.ssl.truststore.password' of table t: required with option 'properties.ssl.truststore.type' of table t JKS"}},
		{name: "trust store file that does not exist",
			props:   map[string]string{schema.PropSecurityProtocol: "SSL", schema.PropTrustStoreType: "PEM", schema.PropTrustStoreLocation: "/nonexistent/ca.pem"},
			wantErr: []string{"field tls: option 'properties.ssl.truststore.location' of table t: open /nonexistent/ca.pem: no such file or directory"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := fromTable(t, tc.yaml, "127.0.0.1:9092", tc.props)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, c)
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "required for mechanism") && tc.props[schema.PropSASLJAASConfig] != "" {
				t.Errorf("a refused JAAS configuration is also reported as a missing user:\n%v", err)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "other-pass") {
				t.Errorf("error shows a password:\n%v", err)
			}
		})
	}
}

// Every connection property schema accepts is applied here (or, for the
// brokers and the group, by the components): none is accepted and ignored.
func TestEveryConnectionPropertyApplied(t *testing.T) {
	t.Parallel()
	for _, name := range schema.ClientPropertyNames(schema.SideBoth) {
		if !slices.Contains(Properties, name) {
			t.Errorf("connection property %s is accepted by schema but not applied by kafkaconn", name)
		}
	}
}
