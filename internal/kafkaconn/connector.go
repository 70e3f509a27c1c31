package kafkaconn

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/schema"
)

// Rejected-credentials back-off bounds: after a rejected login the next
// attempt waits authBackoffMin, doubling per further rejection up to
// authBackoffMax.
const (
	authBackoffMin = time.Second
	authBackoffMax = time.Minute
)

// Connector connects a component to Kafka and applies the Credentials rule
// of Classify across attempts: credentials that were never accepted are a
// config error (Permanent: the run ends), credentials rejected after they
// worked are retried with a back-off that doubles up to a minute, so that a
// rotation on the brokers produces one clear error per back-off period
// instead of a retry storm.
//
// Connect never sleeps: the back-off is the framework's. Connect returns a
// service.ErrBackOff, and Benthos waits that long before it calls Connect
// again (an input's wait ends as soon as the stream stops).
type Connector struct {
	cfg  Config
	auth *Backoff
	// accepted: the credentials were accepted once by this connector.
	accepted atomic.Bool
}

// NewConnector returns a Connector for cfg.
func NewConnector(cfg Config) *Connector {
	return &Connector{cfg: cfg, auth: NewBackoff(authBackoffMin, authBackoffMax)}
}

// Config returns the connection settings.
func (c *Connector) Config() Config { return c.cfg }

// Connect connects as Config.Connect does. When the brokers refuse the
// credentials (Classify: Credentials) the error is a service.ErrBackOff
// whose wait doubles per rejection from 1s to a minute and whose message
// names the attempt and the wait; if the credentials were never accepted by
// this connector it is also marked Permanent (WithClass) and names the
// fields to fix. A component that ends the run on Permanent errors does so;
// one that does not still retries no faster than the back-off. Other errors
// are returned as they are, for Benthos's own short back-off.
func (c *Connector) Connect(ctx context.Context, extra ...kgo.Opt) (*kgo.Client, error) {
	cl, err := c.cfg.Connect(ctx, extra...)
	if err == nil {
		c.accepted.Store(true)
		c.auth.Reset()
		return cl, nil
	}
	if Classify(err) != Credentials {
		return nil, err
	}
	if !c.accepted.Load() {
		// No retry follows: the run ends on this error.
		return nil, WithClass(fmt.Errorf("%w; the brokers never accepted these credentials in this run: fix %s", err, c.cfg.credentialFields(err)), Permanent)
	}
	n, delay := c.auth.Fail()
	err = fmt.Errorf("%w (attempt %d; next attempt in %v)", err, n, delay)
	return nil, service.NewErrBackOff(err, delay)
}

// credentialFields names the fields that hold what the brokers refused:
// the SASL settings for a rejected login, the TLS settings for a refused
// handshake; the table's options when its properties set them.
func (c Config) credentialFields(err error) string {
	opt := func(name string) string { return schema.PropertyPrefix + name }
	if !IsAuthError(err) {
		if c.origin.tableTLS {
			return fmt.Sprintf("the options '%s' and 'properties.ssl.*' of table %s (or field %s)", opt(schema.PropSecurityProtocol), c.origin.table, FieldTLS)
		}
		return fmt.Sprintf("field %s (or %s / %s)", FieldTLS, FieldTrustStore, FieldKeyStore)
	}
	if c.origin.tableSASL {
		return fmt.Sprintf("option '%s' (or '%s') of table %s", opt(schema.PropSASLJAASConfig), opt(schema.PropSASLMechanism), c.origin.table)
	}
	if c.SASL.Mechanism == MechanismOAuthBearer {
		return fmt.Sprintf("field %s.%s (or %s.%s)", FieldSASL, FieldSASLToken, FieldSASL, FieldSASLMechanism)
	}
	return fmt.Sprintf("fields %s.%s and %s.%s (or %s.%s)", FieldSASL, FieldSASLUsername, FieldSASL, FieldSASLPassword, FieldSASL, FieldSASLMechanism)
}
