package kafkaconn

import (
	"strings"
	"testing"
)

// sasl.jaas.config as the Flink and Kafka docs write it, and the forms
// Java's JaasConfig also reads (single quotes, escapes, comments, bare
// values); every error names what is wrong and never shows a value.
func TestParseJAAS(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		mech     Mechanism
		want     SASL
		wantErr  string
	}{
		{"Flink docs PLAIN", `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="p@ss word";`,
			MechanismPlain, SASL{Mechanism: MechanismPlain, Username: "alice", Password: "p@ss word"}, ""},
		{"SCRAM, reordered, bare and single-quoted values", "org.apache.kafka.common.security.scram.ScramLoginModule  REQUIRED\n password='s3cr;et'  username=bob ;",
			MechanismScramSHA512, SASL{Mechanism: MechanismScramSHA512, Username: "bob", Password: "s3cr;et"}, ""},
		{"escapes and comments", `/* a comment */ org.apache.kafka.common.security.scram.ScramLoginModule required // line comment
			username="a\"b" password="c\\d";`, MechanismScramSHA256, SASL{Mechanism: MechanismScramSHA256, Username: `a"b`, Password: `c\d`}, ""},
		{"delegation token", `org.apache.kafka.common.security.scram.ScramLoginModule required username="tok-id" password="hmac" tokenauth="true";`,
			MechanismScramSHA256, SASL{Mechanism: MechanismScramSHA256, Username: "tok-id", Password: "hmac", ScramToken: true}, ""},
		{"empty password is a password", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="";`,
			MechanismPlain, SASL{Mechanism: MechanismPlain, Username: "u"}, ""},
		{"module of another mechanism", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2";`,
			MechanismScramSHA256, SASL{}, "login module org.apache.kafka.common.security.plain.PlainLoginModule does not go with SASL mechanism SCRAM-SHA-256"},
		{"Kerberos", `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k" principal="p";`,
			MechanismPlain, SASL{}, "Kerberos/GSSAPI is not supported"},
		{"OAUTHBEARER", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`,
			MechanismOAuthBearer, SASL{}, "give the bearer token in field sasl.token"},
		{"missing semicolon", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2"`,
			MechanismPlain, SASL{}, "missing the closing ';'"},
		{"two modules", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2"; x required;`,
			MechanismPlain, SASL{}, "more than one login module"},
		{"no flag", `org.apache.kafka.common.security.plain.PlainLoginModule username="u" password="hunter2";`,
			MechanismPlain, SASL{}, "unknown control flag"},
		{"unterminated quote", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2;`,
			MechanismPlain, SASL{}, "unterminated quoted value"},
		{"unknown option", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2" serviceName="kafka";`,
			MechanismPlain, SASL{}, "option serviceName is not read by connectd"},
		{"no username, no password", `org.apache.kafka.common.security.scram.ScramLoginModule required;`,
			MechanismScramSHA512, SASL{}, "option username is required; option password is required"},
		{"duplicate option", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" username="v" password="hunter2";`,
			MechanismPlain, SASL{}, "option username given twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j, err := ParseJAAS(tc.in)
			var got SASL
			if err == nil {
				got, err = j.Credentials(tc.mech)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error with %q, got %v", tc.wantErr, err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Mechanism != tc.want.Mechanism || got.Username != tc.want.Username || got.Password != tc.want.Password || got.ScramToken != tc.want.ScramToken {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if strings.Contains(j.String(), tc.want.Password) && tc.want.Password != "" {
				t.Errorf("String shows the password: %s", j)
			}
		})
	}
}
