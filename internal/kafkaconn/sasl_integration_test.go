package kafkaconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// backOffOf returns the framework back-off an error asks for, failing the
// test if there is none.
func backOffOf(t *testing.T, err error) time.Duration {
	t.Helper()
	var bo *service.ErrBackOff
	if !errors.As(err, &bo) {
		t.Fatalf("want a service.ErrBackOff, got %T: %v", err, err)
	}
	return bo.Wait
}

// TestSASLRealBroker logs in to the real broker's SASL listener with every
// password mechanism, then with a wrong password: the error names the
// mechanism, the user and the fields to fix, never the password; since the
// credentials never worked it is Permanent (the run ends), and it still asks
// the framework for a back-off that doubles, for a component that does not
// end the run on it. Connect itself never waits.
func TestSASLRealBroker(t *testing.T) {
	addr, user, password := kafkatest.SASL(t)
	for _, mech := range []Mechanism{MechanismPlain, MechanismScramSHA256, MechanismScramSHA512} {
		t.Run(string(mech), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			good := Config{SeedBrokers: []string{addr}, ClientID: "connectd-test", MetadataMaxAge: time.Minute,
				RequestTimeout: 10 * time.Second, SASL: SASL{Mechanism: mech, Username: user, Password: password}}
			cl, err := NewConnector(good).Connect(ctx)
			if err != nil {
				t.Fatalf("right password: %v", err)
			}
			cl.Close()

			bad := good
			bad.SASL.Password = "not-" + password
			conn := NewConnector(bad)
			_, err = conn.Connect(ctx)
			if err == nil {
				t.Fatal("wrong password was accepted")
			}
			if !IsAuthError(err) {
				t.Errorf("wrong password: not an authentication error: %v", err)
			}
			if c := Classify(err); c != Permanent {
				t.Errorf("credentials never accepted: class %v, want permanent", c)
			}
			msg := err.Error()
			for _, want := range []string{string(mech), `"` + user + `"`, "sasl.username", "sasl.password"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error does not name %q: %s", want, msg)
				}
			}
			if strings.Contains(msg, bad.SASL.Password) {
				t.Errorf("error leaks the password: %s", msg)
			}
			// The run ends on it: no back-off is asked for, and the message
			// does not promise a next attempt.
			var bo *service.ErrBackOff
			if errors.As(err, &bo) || strings.Contains(msg, "next attempt") {
				t.Errorf("credentials never accepted ask for a retry: %v", err)
			}
		})
	}
}

// Credentials that worked and are then refused (the user's password changed
// on the brokers) are transient: the connector backs off, doubling, and the
// error is not Permanent.
func TestSASLRotatedCredentialsAreTransient(t *testing.T) {
	addr, _, _ := kafkatest.SASL(t)
	plain := kafkatest.Broker(t)
	adm, err := kgo.NewClient(kgo.SeedBrokers(plain))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	admin := kadm.NewClient(adm)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	user := fmt.Sprintf("connectd-rotated-%d", time.Now().UnixNano())
	setPassword := func(pw string) {
		t.Helper()
		res, err := admin.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: kadm.ScramSha256, Iterations: 4096, Password: pw}})
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			t.Fatalf("setting the SCRAM password of %s: %v", user, err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.AlterUserSCRAMs(context.Background(), []kadm.DeleteSCRAM{{User: user, Mechanism: kadm.ScramSha256}}, nil)
	})
	setPassword("first-secret")

	conn := NewConnector(Config{SeedBrokers: []string{addr}, ClientID: "connectd-test", MetadataMaxAge: time.Minute,
		RequestTimeout: 10 * time.Second, SASL: SASL{Mechanism: MechanismScramSHA256, Username: user, Password: "first-secret"}})
	// SCRAM credentials reach the SASL listener through the metadata log:
	// poll until the new user can log in.
	eventually.NoError(t, 30*time.Second, "the new user to log in", func() error {
		cl, err := conn.Connect(ctx)
		if err == nil {
			cl.Close()
		}
		return err
	})

	setPassword("second-secret")
	eventually.True(t, 30*time.Second, "the old password to be refused", func() bool {
		var cl *kgo.Client
		if cl, err = conn.Connect(ctx); err == nil {
			cl.Close()
		}
		return err != nil
	})
	if c := Classify(err); c != Credentials {
		t.Fatalf("rotated credentials: class %v, want credentials (transient with back-off): %v", c, err)
	}
	if wait := backOffOf(t, err); wait < authBackoffMin {
		t.Fatalf("rotated credentials: back-off %v, want at least %v", wait, authBackoffMin)
	}
	if strings.Contains(err.Error(), "never accepted") {
		t.Errorf("rotated credentials reported as never accepted: %v", err)
	}
	t.Logf("rotated credentials: %v", err)
}
