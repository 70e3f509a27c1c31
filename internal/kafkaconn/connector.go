package kafkaconn

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Authentication back-off bounds: after a rejected login the next attempt
// waits authBackoffMin, doubling per further rejection up to authBackoffMax.
const (
	authBackoffMin = time.Second
	authBackoffMax = time.Minute
)

// Connector connects a component to Kafka and remembers authentication
// failures across attempts, so that a wrong password produces one clear error
// per back-off period instead of a retry storm: Benthos calls Connect again
// about once a second, and each call after a rejected login first waits out a
// back-off that doubles up to a minute.
type Connector struct {
	cfg  Config
	auth *Backoff
}

// NewConnector returns a Connector for cfg.
func NewConnector(cfg Config) *Connector {
	return &Connector{cfg: cfg, auth: NewBackoff(authBackoffMin, authBackoffMax)}
}

// Config returns the connection settings.
func (c *Connector) Config() Config { return c.cfg }

// Connect waits out any authentication back-off, then connects as
// Config.Connect does.
func (c *Connector) Connect(ctx context.Context, extra ...kgo.Opt) (*kgo.Client, error) {
	if err := c.auth.Wait(ctx, "retry after a rejected SASL login"); err != nil {
		return nil, err
	}
	cl, err := c.cfg.Connect(ctx, extra...)
	if err != nil {
		if IsAuthError(err) {
			n, delay := c.auth.Fail()
			return nil, fmt.Errorf("%w (attempt %d; next attempt in %v)", err, n, delay)
		}
		return nil, err
	}
	c.auth.Reset()
	return cl, nil
}
