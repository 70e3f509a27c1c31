// Package kafkatest holds helpers for tests that run against the real Apache
// Kafka broker started by scripts/kafka.sh.
//
// Start the broker and export its addresses once per shell:
//
//	scripts/kafka.sh up
//	eval "$(scripts/kafka.sh env)"
//
// Without those variables the helpers skip the test, unless
// CONNECTD_REQUIRE_KAFKA=1 is set (as in CI), in which case they fail it.
package kafkatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/eventually"
)

// Environment variables printed by `scripts/kafka.sh env`.
const (
	envBrokers      = "CONNECTD_KAFKA_BROKERS"
	envSASLBrokers  = "CONNECTD_KAFKA_SASL_BROKERS"
	envSASLUser     = "CONNECTD_KAFKA_SASL_USER"
	envSASLPassword = "CONNECTD_KAFKA_SASL_PASSWORD"
	envSSLBrokers   = "CONNECTD_KAFKA_SSL_BROKERS"
	envSASLSSL      = "CONNECTD_KAFKA_SASL_SSL_BROKERS"
	envSSLCA        = "CONNECTD_KAFKA_SSL_CA"
	envTrustPKCS12  = "CONNECTD_KAFKA_SSL_TRUSTSTORE_PKCS12"
	envTrustJKS     = "CONNECTD_KAFKA_SSL_TRUSTSTORE_JKS"
	envTrustPass    = "CONNECTD_KAFKA_SSL_TRUSTSTORE_PASSWORD"
	// envRequire set to 1 turns every skip of this package into a failure.
	envRequire = "CONNECTD_REQUIRE_KAFKA"
)

// topicReadyTimeout bounds how long NewTopic waits for leaders.
const topicReadyTimeout = 60 * time.Second

// unavailable skips the test, or fails it when CONNECTD_REQUIRE_KAFKA=1.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(envRequire) == "1" {
		t.Fatalf("%s (%s=1, so this is a failure)", msg, envRequire)
	}
	t.Skip(msg)
}

func requireEnv(t testing.TB, name string) string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		unavailable(t, "real Kafka test: %s is not set; run `scripts/kafka.sh up && eval \"$(scripts/kafka.sh env)\"`", name)
	}
	return v
}

// Broker returns the PLAINTEXT bootstrap address from CONNECTD_KAFKA_BROKERS.
// If unset: t.Skip with a message saying to run `scripts/kafka.sh up`, unless
// CONNECTD_REQUIRE_KAFKA=1 in which case t.Fatal.
func Broker(t testing.TB) string {
	t.Helper()
	return requireEnv(t, envBrokers)
}

// SASL returns the SASL_PLAINTEXT address, user and password (same skip/fail
// rule). The listener accepts PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 for this
// user.
func SASL(t testing.TB) (addr, user, password string) {
	t.Helper()
	addr = requireEnv(t, envSASLBrokers)
	user = requireEnv(t, envSASLUser)
	password = requireEnv(t, envSASLPassword)
	return addr, user, password
}

// TLSListeners are the broker's TLS listeners and the trust stores of the
// throwaway CA that signed its certificate (scripts/kafka.sh generates them
// at `up`). The certificate names 127.0.0.1 and localhost.
type TLSListeners struct {
	// SSL and SASLSSL are the SSL and SASL_SSL bootstrap addresses; the
	// SASL_SSL listener takes the user and mechanisms of SASL.
	SSL, SASLSSL string
	// CA is the PEM file of the CA certificate.
	CA string
	// PKCS12 and JKS hold the same CA certificate as trust stores, with
	// password StorePassword.
	PKCS12, JKS, StorePassword string
}

// TLS returns the TLS listeners from the CONNECTD_KAFKA_SSL_* variables
// (same skip/fail rule as Broker: a broker started by an older
// scripts/kafka.sh has no TLS listeners until `scripts/kafka.sh restart`).
func TLS(t testing.TB) TLSListeners {
	t.Helper()
	return TLSListeners{
		SSL:           requireEnv(t, envSSLBrokers),
		SASLSSL:       requireEnv(t, envSASLSSL),
		CA:            requireEnv(t, envSSLCA),
		PKCS12:        requireEnv(t, envTrustPKCS12),
		JKS:           requireEnv(t, envTrustJKS),
		StorePassword: requireEnv(t, envTrustPass),
	}
}

// Kcat returns the path of the kcat binary (same skip/fail rule if not on
// PATH). `scripts/kafka.sh deps` installs it.
func Kcat(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"kcat", "kafkacat"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	unavailable(t, "kcat is not on PATH; run `scripts/kafka.sh deps` (apt-get install -y kcat)")
	return ""
}

// seeds splits a comma-separated bootstrap list as printed by scripts/kafka.sh.
func seeds(brokers string) []string {
	var out []string
	for _, b := range strings.Split(brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// NewTopic creates a topic with a unique name (prefix + random suffix) and the
// given partitions (replication 1) via kadm on brokers, waits until its
// metadata shows all partitions with leaders, registers t.Cleanup to delete it,
// and returns the name.
func NewTopic(t testing.TB, brokers string, prefix string, partitions int) string {
	t.Helper()
	if partitions < 1 {
		t.Fatalf("kafkatest.NewTopic: partitions must be >= 1, got %d", partitions)
	}
	name := topicName(prefix)

	adm, closeAdm := newAdmin(t, brokers)
	defer closeAdm()

	ctx, cancel := context.WithTimeout(context.Background(), topicReadyTimeout)
	defer cancel()

	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("kafkatest.NewTopic: create topic %q with %d partitions on %s: %v", name, partitions, brokers, err)
	}
	t.Cleanup(func() { deleteTopic(t, brokers, name) })

	eventually.NoError(t, topicReadyTimeout, fmt.Sprintf("a leader for each of the %d partitions of topic %q (kafkatest.NewTopic)", partitions, name),
		func() error { return topicReady(adm, name, partitions) })
	return name
}

func newAdmin(t testing.TB, brokers string) (*kadm.Client, func()) {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds(brokers)...),
		kgo.DialTimeout(5*time.Second),
		kgo.RequestRetries(5),
	)
	if err != nil {
		t.Fatalf("kafkatest: new client for %s: %v", brokers, err)
	}
	return kadm.NewClient(cl), cl.Close
}

// topicReady returns nil once every partition of topic has a leader, and
// else what is missing.
func topicReady(adm *kadm.Client, topic string, partitions int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return err
	}
	td, ok := md.Topics[topic]
	if !ok {
		return errors.New("topic missing from metadata")
	}
	if td.Err != nil {
		return td.Err
	}
	if len(td.Partitions) != partitions {
		return fmt.Errorf("%d of %d partitions in metadata", len(td.Partitions), partitions)
	}
	for _, p := range td.Partitions {
		if p.Err != nil {
			return fmt.Errorf("partition %d: %w", p.Partition, p.Err)
		}
		if p.Leader < 0 {
			return fmt.Errorf("partition %d has no leader", p.Partition)
		}
	}
	return nil
}

func deleteTopic(t testing.TB, brokers, topic string) {
	t.Helper()
	adm, closeAdm := newAdmin(t, brokers)
	defer closeAdm()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.DeleteTopic(ctx, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Logf("kafkatest: delete topic %q: %v", topic, err)
	}
}

// topicName returns prefix + "-" + a random suffix, with characters Kafka does
// not allow in topic names replaced by '_' (so t.Name() is a fine prefix).
func topicName(prefix string) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, prefix)
	if clean == "" {
		clean = "kafkatest"
	}
	if len(clean) > 200 {
		clean = clean[:200]
	}
	return clean + "-" + hex.EncodeToString(b[:])
}
