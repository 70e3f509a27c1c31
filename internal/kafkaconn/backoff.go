package kafkaconn

import (
	"sync"
	"time"
)

// Backoff spaces out attempts after failures: the first failure sets a
// delay of Min, each further one doubles it up to Max, and Reset clears it.
// The Connector uses one for rejected logins; kafka_sink uses one for lost
// transactional producers, so that repeated failures are spaced out and
// visible instead of a tight retry loop. It never sleeps: the caller hands
// the delay to Benthos (service.NewErrBackOff from Connect), which waits.
type Backoff struct {
	min, max time.Duration
	mu       struct {
		sync.Mutex
		failures int
		retryAt  time.Time
	}
}

// NewBackoff returns a Backoff doubling from min to max.
func NewBackoff(min, max time.Duration) *Backoff {
	return &Backoff{min: min, max: max}
}

// Fail records a failure and returns how many there have been since the last
// Reset and the delay before the next attempt.
func (b *Backoff) Fail() (failures int, delay time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.failures++
	delay = min(b.min<<min(b.mu.failures-1, 10), b.max)
	b.mu.retryAt = time.Now().Add(delay)
	return b.mu.failures, delay
}

// Reset forgets earlier failures.
func (b *Backoff) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.failures = 0
	b.mu.retryAt = time.Time{}
}

// Failures is the number of failures since the last Reset.
func (b *Backoff) Failures() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.failures
}

// Remaining is how long until the delay set by the last failure has
// passed; zero once it has, or after Reset.
func (b *Backoff) Remaining() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(time.Until(b.mu.retryAt), 0)
}
