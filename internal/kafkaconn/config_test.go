package kafkaconn

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func parse(t *testing.T, yaml string) (Config, error) {
	t.Helper()
	pConf, err := service.NewConfigSpec().Fields(Fields()...).ParseYAML(yaml, nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return FromParsed(pConf)
}

func TestFromParsed(t *testing.T) {
	t.Parallel()
	c, err := parse(t, `
seed_brokers: [ "a:9092,b:9092", "c:9092" ]
sasl:
  mechanism: SCRAM-SHA-512
  username: alice
  password: s3cret
metadata_max_age: 1m
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.SeedBrokers, " "); got != "a:9092 b:9092 c:9092" {
		t.Errorf("seed brokers = %q", got)
	}
	if c.ClientID != "connectd" || c.MetadataMaxAge != time.Minute || c.RequestTimeout != 10*time.Second {
		t.Errorf("defaults not applied: %+v", c)
	}
	if c.SASL.Mechanism != MechanismScramSHA512 || c.SASL.Username != "alice" || c.SASL.Password != "s3cret" {
		t.Errorf("sasl = %+v", c.SASL)
	}
	if c.TLS != nil {
		t.Errorf("tls enabled without being asked")
	}
	if len(c.Opts()) != 6 { // seeds, max age, timeout, client id, idle, sasl
		t.Errorf("Opts() has %d options, want 6", len(c.Opts()))
	}
}

// A metadata max age below franz-go's default min age (5s) must still build a
// client: tests and fast discovery use short ages.
func TestShortMetadataMaxAgeBuildsAClient(t *testing.T) {
	t.Parallel()
	c, err := parse(t, `
seed_brokers: [ "127.0.0.1:1" ]
metadata_max_age: 500ms
`)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(c.Opts()...)
	if err != nil {
		t.Fatalf("client with metadata_max_age 500ms: %v", err)
	}
	cl.Close()
	if _, err := parse(t, "seed_brokers: [ \"a:1\" ]\nmetadata_max_age: 1ms\n"); err == nil || !strings.Contains(err.Error(), "metadata_max_age: must be at least 10ms") {
		t.Fatalf("1ms accepted or unclear: %v", err)
	}
}

func TestValidateNamesFields(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"no brokers", `seed_brokers: []`, []string{"seed_brokers: at least one"}},
		{"no port", `seed_brokers: [ "localhost" ]`, []string{`"localhost" has no port`}},
		{"scram without user", `
seed_brokers: [ "a:1" ]
sasl: { mechanism: SCRAM-SHA-256 }`, []string{"sasl.username: required for mechanism SCRAM-SHA-256"}},
		{"oauth without token", `
seed_brokers: [ "a:1" ]
sasl: { mechanism: OAUTHBEARER }`, []string{"sasl.token: required"}},
		{"several problems at once", `
seed_brokers: [ "x" ]
sasl: { mechanism: PLAIN }
request_timeout_overhead: 0s`, []string{"has no port", "sasl.username", "request_timeout_overhead: must be positive"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.yaml)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestSASLAgainstFakeCluster(t *testing.T) {
	t.Parallel()
	for _, mech := range []string{MechanismPlain, MechanismScramSHA256, MechanismScramSHA512} {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser(mech, "alice", "right-password"))
			if err != nil {
				t.Fatal(err)
			}
			defer cluster.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()

			good := Config{SeedBrokers: cluster.ListenAddrs(), MetadataMaxAge: time.Minute, RequestTimeout: 5 * time.Second,
				SASL: SASL{Mechanism: Mechanism(mech), Username: "alice", Password: "right-password"}}
			cl, err := good.Connect(ctx)
			if err != nil {
				t.Fatalf("right password: %v", err)
			}
			cl.Close()

			bad := good
			bad.SASL.Password = "wrong-password"
			cl, err = bad.Connect(ctx)
			if err == nil {
				cl.Close()
				t.Fatal("wrong password connected")
			}
			msg := err.Error()
			// kfake drops the connection on a failed authentication where a
			// real broker answers SASL_AUTHENTICATION_FAILED (tested in
			// sasl_integration_test.go), so only the message is checked here.
			if !strings.Contains(msg, mech) || !strings.Contains(msg, `"alice"`) {
				t.Errorf("error does not name mechanism and user: %s", msg)
			}
			if strings.Contains(msg, "wrong-password") {
				t.Errorf("error leaks the password: %s", msg)
			}
		})
	}
}
