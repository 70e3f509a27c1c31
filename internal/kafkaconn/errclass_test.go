package kafkaconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	wrap := func(err error) error { return fmt.Errorf("producing to topic %q partition 0: %w", "orders", err) }
	dial := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	for _, tc := range []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, Transient},

		// Permanent: a config or cluster change is needed.
		{"transaction timeout above the broker's maximum", wrap(kerr.InvalidTransactionTimeout), Permanent},
		{"topic ACL", wrap(kerr.TopicAuthorizationFailed), Permanent},
		{"group ACL", wrap(kerr.GroupAuthorizationFailed), Permanent},
		{"transactional id ACL", wrap(kerr.TransactionalIDAuthorizationFailed), Permanent},
		{"cluster ACL", wrap(kerr.ClusterAuthorizationFailed), Permanent},
		{"broker too old", wrap(kerr.UnsupportedVersion), Permanent},
		{"compression the broker lacks", wrap(kerr.UnsupportedCompressionType), Permanent},
		{"illegal topic name", wrap(kerr.InvalidTopicException), Permanent},
		{"create-topic policy", wrap(kerr.PolicyViolation), Permanent},
		{"invalid config", wrap(kerr.InvalidConfig), Permanent},
		{"unknown topic, confirmed missing", WithClass(wrap(kerr.UnknownTopicOrPartition), Permanent), Permanent},
		{"permanent behind a framework back-off", service.NewErrBackOff(wrap(kerr.TopicAuthorizationFailed), time.Second), Permanent},
		{"marked behind a framework back-off", service.NewErrBackOff(WithClass(io.EOF, Permanent), time.Second), Permanent},
		{"permanent cause of a cancelled retry", fmt.Errorf("%w (gave up retrying: %w)", wrap(kerr.GroupAuthorizationFailed), context.Canceled), Permanent},

		// Credentials: permanent until they worked once (Connector).
		{"SASL login rejected", wrap(kerr.SaslAuthenticationFailed), Credentials},
		{"SASL mechanism not enabled", kerr.UnsupportedSaslMechanism, Credentials},
		{"illegal SASL state", kerr.IllegalSaslState, Credentials},
		{"unknown certificate authority", dial(x509.UnknownAuthorityError{}), Credentials},
		{"certificate for another host", dial(x509.HostnameError{Host: "kafka-1"}), Credentials},
		{"expired certificate", dial(x509.CertificateInvalidError{Reason: x509.Expired}), Credentials},
		{"TLS to a plaintext listener", dial(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), Credentials},
		{"client certificate refused", dial(tls.AlertError(42)), Credentials},
		{"rejected login behind a back-off", service.NewErrBackOff(kerr.SaslAuthenticationFailed, time.Second), Credentials},

		// Record: that record fails alone.
		{"record over max_message_bytes", wrap(fmt.Errorf("%w (uncompressed_bytes=2000000)", kerr.MessageTooLarge)), Record},
		{"batch over the topic's max.message.bytes", wrap(kerr.RecordListTooLarge), Record},
		{"timestamp out of range", wrap(kerr.InvalidTimestamp), Record},
		{"invalid record", wrap(kerr.InvalidRecord), Record},

		// Transient: retried with back-off.
		{"unknown topic, not confirmed", wrap(kerr.UnknownTopicOrPartition), Transient},
		{"not leader", wrap(kerr.NotLeaderForPartition), Transient},
		{"coordinator not available", kerr.CoordinatorNotAvailable, Transient},
		{"not coordinator", kerr.NotCoordinator, Transient},
		{"coordinator loading", kerr.CoordinatorLoadInProgress, Transient},
		{"concurrent transactions", kerr.ConcurrentTransactions, Transient},
		{"request timed out", wrap(kerr.RequestTimedOut), Transient},
		{"not enough replicas", wrap(kerr.NotEnoughReplicas), Transient},
		{"network exception", kerr.NetworkException, Transient},
		{"producer fenced (a new producer is made)", kerr.ProducerFenced, Transient},
		{"invalid producer epoch", kerr.InvalidProducerEpoch, Transient},
		{"invalid transaction state", kerr.InvalidTxnState, Transient},
		{"unknown server error", kerr.UnknownServerError, Transient},
		{"connection refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), Transient},
		{"connection dropped", wrap(io.EOF), Transient},
		{"deadline", wrap(context.DeadlineExceeded), Transient},
		{"client closed", wrap(kgo.ErrClientClosed), Transient},
		{"a plain error", errors.New("something else"), Transient},
		{"marked transient", WithClass(kerr.TopicAuthorizationFailed, Transient), Transient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// A class mark keeps the error's text and chain.
func TestWithClassKeepsTheChain(t *testing.T) {
	t.Parallel()
	base := fmt.Errorf("topic %q: %w", "orders", kerr.UnknownTopicOrPartition)
	err := WithClass(base, Permanent)
	if err.Error() != base.Error() || !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("mark changed the error: %v", err)
	}
	if WithClass(nil, Permanent) != nil {
		t.Fatal("WithClass(nil) is not nil")
	}
}
