package kafkaconn

import (
	"context"
	"fmt"
	"sync"
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
	cfg Config

	mu struct {
		sync.Mutex
		authFailures int
		retryAt      time.Time
	}
	now func() time.Time // for tests
}

// NewConnector returns a Connector for cfg.
func NewConnector(cfg Config) *Connector {
	return &Connector{cfg: cfg, now: time.Now}
}

// Config returns the connection settings.
func (c *Connector) Config() Config { return c.cfg }

// Connect waits out any authentication back-off, then connects as
// Config.Connect does.
func (c *Connector) Connect(ctx context.Context, extra ...kgo.Opt) (*kgo.Client, error) {
	c.mu.Lock()
	wait := c.mu.retryAt.Sub(c.now())
	c.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting %v to retry after a rejected SASL login: %w", wait.Round(time.Millisecond), ctx.Err())
		}
	}
	cl, err := c.cfg.Connect(ctx, extra...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if IsAuthError(err) {
			c.mu.authFailures++
			backoff := authBackoffMin << min(c.mu.authFailures-1, 6)
			backoff = min(backoff, authBackoffMax)
			c.mu.retryAt = c.now().Add(backoff)
			return nil, fmt.Errorf("%w (attempt %d; next attempt in %v)", err, c.mu.authFailures, backoff)
		}
		return nil, err
	}
	c.mu.authFailures = 0
	c.mu.retryAt = time.Time{}
	return cl, nil
}
