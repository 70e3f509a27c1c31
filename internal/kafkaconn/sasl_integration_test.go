package kafkaconn

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkatest"
)

// TestSASLRealBroker logs in to the real broker's SASL listener with every
// password mechanism, then with a wrong password: the error must name the
// mechanism and user, never the password, and a second attempt must wait out
// a back-off instead of retrying at once.
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
			msg := err.Error()
			if !strings.Contains(msg, string(mech)) || !strings.Contains(msg, `"`+user+`"`) {
				t.Errorf("error does not name mechanism %s and user %s: %s", mech, user, msg)
			}
			if strings.Contains(msg, bad.SASL.Password) {
				t.Errorf("error leaks the password: %s", msg)
			}

			began := time.Now()
			if _, err := conn.Connect(ctx); err == nil {
				t.Fatal("second attempt with the wrong password was accepted")
			}
			if waited := time.Since(began); waited < authBackoffMin {
				t.Errorf("second attempt came after %v, want a back-off of at least %v", waited, authBackoffMin)
			}
		})
	}
}
