package kafkaconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Class is what an error of a Kafka component means for the run (DESIGN.md
// contract 9). docs/errors.md lists the classes and the errors in each.
type Class uint8

const (
	// Transient errors can clear by themselves: a broker down, restarting
	// or moving a partition, a coordinator loading, a timeout. The
	// component retries with a back-off and logs one line per attempt.
	// Every error not listed in another class is transient: ending a run
	// is an explicit decision.
	Transient Class = iota
	// Permanent errors cannot clear without a change of the config or the
	// cluster: a transaction timeout above the broker's maximum, a missing
	// ACL, a topic that does not exist and is not created, a feature the
	// broker does not support. The run ends (internal/halt) with a message
	// naming the field to change.
	Permanent
	// Credentials errors are a rejected login (SASL) or a refused TLS
	// handshake. They are permanent at a component's first connect, when
	// the credentials never worked (a wrong password is a config error),
	// and transient once they were accepted in this run (rotated on the
	// brokers, a broker back from a restart that has not loaded them
	// yet): then the next attempt waits 1s, doubling per rejection up to
	// a minute. Connector.Connect applies the rule.
	Credentials
	// Record errors refuse one record for what it holds (larger than the
	// limit, an invalid timestamp): that record fails alone, the run goes
	// on. Benthos retries a failed message; route it elsewhere with a
	// `fallback` output.
	Record
)

func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case Permanent:
		return "permanent"
	case Credentials:
		return "credentials"
	case Record:
		return "record"
	}
	return "unknown"
}

// permanentCodes are the Kafka errors that need a config or cluster change.
// kerr.IsRetriable is false for all of them, but it is false for many
// errors that do clear (a fenced producer, an invalid transaction state),
// so the list is explicit.
var permanentCodes = []error{
	kerr.InvalidTransactionTimeout,          // transaction_timeout above transaction.max.timeout.ms
	kerr.TopicAuthorizationFailed,           // no ACL for the topic
	kerr.GroupAuthorizationFailed,           // no ACL for the consumer group
	kerr.TransactionalIDAuthorizationFailed, // no ACL for the transactional id
	kerr.ClusterAuthorizationFailed,         // no cluster ACL (IDEMPOTENT_WRITE before Kafka 2.8)
	kerr.DelegationTokenAuthorizationFailed,
	kerr.UnsupportedVersion,          // the broker is too old for the request
	kerr.UnsupportedForMessageFormat, // the topic's message format is too old
	kerr.UnsupportedCompressionType,  // zstd before Kafka 2.1
	kerr.InvalidTopicException,       // an illegal topic name
	kerr.InvalidRequiredAcks,
	kerr.InvalidConfig,
	kerr.PolicyViolation, // the broker's create-topic policy refuses the topic
	kerr.InvalidReplicationFactor,
	kerr.InvalidPartitions,
	kerr.InvalidGroupID,
	kerr.SecurityDisabled,
}

// recordCodes refuse one record (or the broker's batch holding it).
var recordCodes = []error{
	kerr.MessageTooLarge,        // larger than max_message_bytes or the topic's max.message.bytes
	kerr.RecordListTooLarge,     // idem, for a whole batch
	kerr.InvalidRecord,          // for example a record without a key on a compacted topic
	kerr.InvalidTimestamp,       // outside message.timestamp.(before|after).max.ms
	kerr.OffsetMetadataTooLarge, // committed offset metadata over offset.metadata.max.bytes
}

// Classify returns the class of an error returned by a franz-go client or
// by Connect. An error marked with WithClass has that class; otherwise the
// Kafka error code decides (the first one found in the chain), then the
// type of a TLS failure; anything else is Transient: network errors,
// timeouts and cancellations, a closed client, and every Kafka error not
// listed (retriable ones, and those that clear by recreating the producer:
// PRODUCER_FENCED, INVALID_TXN_STATE, ...). A *service.ErrBackOff is
// classified by the error it carries.
func Classify(err error) Class {
	if err == nil {
		return Transient
	}
	var marked *classified
	if errors.As(err, &marked) {
		return marked.class
	}
	var bo *service.ErrBackOff
	if errors.As(err, &bo) {
		return Classify(bo.Err)
	}
	if IsAuthError(err) || isTLSRefusal(err) {
		return Credentials
	}
	for _, code := range permanentCodes {
		if errors.Is(err, code) {
			return Permanent
		}
	}
	for _, code := range recordCodes {
		if errors.Is(err, code) {
			return Record
		}
	}
	return Transient
}

// WithClass marks err with class c, for a component that knows more than
// the error code: an unknown topic confirmed missing is Permanent, a
// rejected login at the first connect is Permanent. errors.Is and
// errors.As see through the mark.
func WithClass(err error, c Class) error {
	if err == nil {
		return nil
	}
	return &classified{class: c, err: err}
}

type classified struct {
	class Class
	err   error
}

func (e *classified) Error() string { return e.err.Error() }
func (e *classified) Unwrap() error { return e.err }

// isTLSRefusal reports whether err is a TLS handshake that failed for its
// configuration: a certificate that does not verify, a TLS client talking
// to a listener that does not speak TLS, or an alert from a broker that
// refused the client's certificate.
func isTLSRefusal(err error) bool {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verification     *tls.CertificateVerificationError
		header           tls.RecordHeaderError
		alert            tls.AlertError // the broker refused our certificate or parameters
	)
	return errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &verification) || errors.As(err, &header) || errors.As(err, &alert)
}

// tlsProblem says in words why a TLS handshake failed, for the error a
// user reads.
func tlsProblem(err error) string {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		header           tls.RecordHeaderError
		alert            tls.AlertError
	)
	switch {
	case errors.As(err, &unknownAuthority):
		return "the broker's certificate is not signed by an authority this client trusts (check the trust store: the CA certificate that signed the brokers' certificates)"
	case errors.As(err, &hostname):
		return "the broker's certificate does not name the host connected to (use the name in the certificate, or turn the host name check off)"
	case errors.As(err, &invalid):
		return "the broker's certificate is not valid (expired, not yet valid, or not for server authentication)"
	case errors.As(err, &header):
		return "the listener does not speak TLS (a PLAINTEXT or SASL_PLAINTEXT port?)"
	case errors.As(err, &alert):
		return "the broker refused the handshake (a client certificate it does not trust, or no common TLS version)"
	}
	return "the certificate does not verify"
}
