package kafkaconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/connectd/connectd/internal/speclint"
	"github.com/connectd/connectd/schema"
)

// Metadata age bounds: franz-go's default minimum age between metadata
// refreshes, and the smallest age it accepts at all.
const (
	defaultMetadataMinAge = 5 * time.Second
	minMetadataAge        = 10 * time.Millisecond
)

// Mechanism is a SASL mechanism.
type Mechanism string

// SASL holds parsed SASL settings. The zero value means no authentication.
type SASL struct {
	Mechanism  Mechanism
	Username   string
	Password   string
	Token      string
	Extensions map[string]string
	// ScramToken: the SCRAM user and password are a delegation token
	// (`tokenauth=true` in a ScramLoginModule JAAS configuration).
	ScramToken bool
}

// on reports whether a mechanism is set.
func (s SASL) on() bool { return s.Mechanism != "" && s.Mechanism != MechanismNone }

// Config is the typed form of the connection fields.
type Config struct {
	SeedBrokers     []string
	ClientID        string
	TLS             *tls.Config // nil: plaintext
	SASL            SASL
	MetadataMaxAge  time.Duration
	RequestTimeout  time.Duration
	ConnIdleTimeout time.Duration
	// ClientLogLevel is the level from which the client's own log lines
	// are written to clientLog (LogClientTo); LogLevelNone: none.
	ClientLogLevel kgo.LogLevel
	clientLog      *service.Logger
	// origin names where the TLS and SASL settings came from, for the
	// error of a refused login or handshake: the YAML fields, or a
	// table's properties.
	origin origin
}

// origin names the settings a user fixes when the brokers refuse the
// credentials; the zero value names the YAML fields.
type origin struct {
	table     string // the table whose properties set them, "" if none
	tableTLS  bool   // the table's properties set the TLS settings
	tableSASL bool   // the table's properties set the SASL credentials
	// jaasRefused: the table's sasl.jaas.config was refused (and the
	// refusal reported), so its user is not missing.
	jaasRefused bool
}

// FromParsed reads the connection fields of a component's parsed config.
func FromParsed(conf *service.ParsedConfig) (Config, error) {
	return FromParsedTable(conf, TableConn{})
}

// FromParsedWithBrokers is FromParsed with the brokers to use when the
// config has no seed_brokers: a Flink table's `properties.bootstrap.servers`.
// It reports every problem at once.
func FromParsedWithBrokers(conf *service.ParsedConfig, brokers []string) (Config, error) {
	return FromParsedTable(conf, TableConn{Brokers: brokers})
}

// FromParsedTable reads the connection fields of a component's parsed
// config, and applies what a Flink table sets of the connection: its
// brokers and its Kafka client properties (properties.go). It reports every
// problem at once, a property that contradicts a written field included.
func FromParsedTable(conf *service.ParsedConfig, tc TableConn) (Config, error) {
	y, errs := readYAML(conf)
	brokers := tc.Brokers
	if len(y.brokers) > 0 || brokers == nil {
		brokers = y.brokers
	}
	var c Config
	for _, b := range brokers {
		for _, addr := range strings.Split(b, ",") {
			if addr = strings.TrimSpace(addr); addr != "" {
				c.SeedBrokers = append(c.SeedBrokers, addr)
			}
		}
	}
	c.ClientLogLevel = y.clientLogLevel
	errs = append(errs, tc.apply(&c, y)...)
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// yamlConn is what the YAML fields say of the connection, with which of
// them the user wrote (a field equal to its default counts as not
// written: a parsed config holds the defaults).
type yamlConn struct {
	brokers  []string
	clientID string
	tls      *tls.Config // the tls field, nil when not enabled
	// rootCAs, rootCAsFile, clientCerts and skipVerify are the parts of
	// the tls field that table properties can contradict.
	rootCAs, rootCAsFile string
	clientCerts          bool
	skipVerify           bool
	trust                TrustStore
	key                  KeyStore
	verifyHostname       bool
	sasl                 SASL
	metadataMaxAge       time.Duration
	requestTimeout       time.Duration
	connIdleTimeout      time.Duration
	clientLogLevel       kgo.LogLevel
}

// readYAML reads the connection fields, reporting every problem.
func readYAML(conf *service.ParsedConfig) (yamlConn, []error) {
	var (
		y    yamlConn
		errs []error
	)
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	// A duration that does not parse is reported once; Validate sees its
	// default instead.
	duration := func(field, def string) time.Duration {
		d, err := speclint.Duration(conf, field)
		if err != nil {
			errs = append(errs, err)
			d, _ = time.ParseDuration(def)
		}
		return d
	}
	if conf.Contains(FieldSeedBrokers) {
		listed, err := conf.FieldStringList(FieldSeedBrokers)
		keep(err)
		y.brokers = listed
	}
	var err error
	y.clientID, err = conf.FieldString(FieldClientID)
	keep(err)
	tlsConf, tlsOn, err := conf.FieldTLSToggled(FieldTLS)
	if err != nil {
		errs = append(errs, fmt.Errorf("field %s: %w", FieldTLS, err))
	} else if tlsOn {
		y.tls = tlsConf
		tc := conf.Namespace(FieldTLS)
		y.rootCAs, _ = tc.FieldString(tlsFieldRootCAs)
		y.rootCAsFile, _ = tc.FieldString(tlsFieldRootCAsFile)
		y.skipVerify, _ = tc.FieldBool(tlsFieldSkipCertVerify)
		if certs, err := tc.FieldObjectList(tlsFieldClientCerts); err == nil {
			y.clientCerts = len(certs) > 0
		}
	}
	// str reads a string field of an object field, reporting its error.
	str := func(ns *service.ParsedConfig, field string) string {
		v, err := ns.FieldString(field)
		keep(err)
		return v
	}
	if conf.Contains(FieldTrustStore) {
		ns := conf.Namespace(FieldTrustStore)
		y.trust.Type = StoreType(str(ns, FieldStoreType))
		y.trust.File = str(ns, FieldStoreFile)
		y.trust.Password = str(ns, FieldStorePassword)
	}
	if conf.Contains(FieldKeyStore) {
		ns := conf.Namespace(FieldKeyStore)
		y.key.Type = StoreType(str(ns, FieldStoreType))
		y.key.File = str(ns, FieldStoreFile)
		y.key.Password = str(ns, FieldStorePassword)
		y.key.KeyPassword = str(ns, FieldStoreKeyPassword)
	}
	y.verifyHostname = true
	if conf.Contains(FieldTLSVerifyHostname) {
		y.verifyHostname, err = conf.FieldBool(FieldTLSVerifyHostname)
		keep(err)
	}
	if conf.Contains(FieldSASL) {
		sc := conf.Namespace(FieldSASL)
		y.sasl.Mechanism = Mechanism(str(sc, FieldSASLMechanism))
		y.sasl.Username = str(sc, FieldSASLUsername)
		y.sasl.Password = str(sc, FieldSASLPassword)
		y.sasl.Token = str(sc, FieldSASLToken)
		if sc.Contains(FieldSASLExtensions) {
			y.sasl.Extensions, err = sc.FieldStringMap(FieldSASLExtensions)
			keep(err)
		}
	}
	y.metadataMaxAge = duration(FieldMetadataMaxAge, DefaultMetadataMaxAge)
	y.requestTimeout = duration(FieldRequestTimeout, DefaultRequestTimeout)
	y.connIdleTimeout = duration(FieldConnIdleTimeout, DefaultConnIdleTimeout)
	if conf.Contains(FieldClientLogLevel) {
		lvl, err := conf.FieldString(FieldClientLogLevel)
		keep(err)
		y.clientLogLevel, err = parseClientLogLevel(lvl)
		keep(err)
	}
	return y, errs
}

// Validate collects every problem with the connection settings.
func (c Config) Validate() error {
	var errs []error
	if len(c.SeedBrokers) == 0 {
		errs = append(errs, fmt.Errorf("field %s: at least one broker address is required", FieldSeedBrokers))
	}
	for _, b := range c.SeedBrokers {
		if !strings.Contains(b, ":") {
			errs = append(errs, fmt.Errorf("field %s: address %q has no port (want host:port)", FieldSeedBrokers, b))
		}
	}
	switch c.SASL.Mechanism {
	case "", MechanismNone:
	case MechanismPlain, MechanismScramSHA256, MechanismScramSHA512:
		if c.SASL.Username == "" && !c.origin.jaasRefused {
			or := ""
			if c.origin.table != "" {
				or = fmt.Sprintf(" (or option '%s%s' of table %s)", schema.PropertyPrefix, schema.PropSASLJAASConfig, c.origin.table)
			}
			errs = append(errs, fmt.Errorf("field %s.%s: required for mechanism %s%s", FieldSASL, FieldSASLUsername, c.SASL.Mechanism, or))
		}
	case MechanismOAuthBearer:
		if c.SASL.Token == "" {
			errs = append(errs, fmt.Errorf("field %s.%s: required for mechanism %s", FieldSASL, FieldSASLToken, c.SASL.Mechanism))
		}
	default:
		errs = append(errs, fmt.Errorf("field %s.%s: unknown mechanism %q (want one of %s, %s, %s, %s, %s)",
			FieldSASL, FieldSASLMechanism, c.SASL.Mechanism, MechanismNone, MechanismPlain, MechanismScramSHA256, MechanismScramSHA512, MechanismOAuthBearer))
	}
	if c.MetadataMaxAge < minMetadataAge {
		errs = append(errs, fmt.Errorf("field %s: must be at least %v, got %v", FieldMetadataMaxAge, minMetadataAge, c.MetadataMaxAge))
	}
	if c.RequestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("field %s: must be positive, got %v", FieldRequestTimeout, c.RequestTimeout))
	}
	return errors.Join(errs...)
}

// saslMechanism returns the franz-go mechanism, or nil for none.
func (s SASL) saslMechanism() sasl.Mechanism {
	switch s.Mechanism {
	case MechanismPlain:
		return plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism()
	case MechanismScramSHA256:
		return scram.Auth{User: s.Username, Pass: s.Password, IsToken: s.ScramToken}.AsSha256Mechanism()
	case MechanismScramSHA512:
		return scram.Auth{User: s.Username, Pass: s.Password, IsToken: s.ScramToken}.AsSha512Mechanism()
	case MechanismOAuthBearer:
		return oauth.Auth{Token: s.Token, Extensions: s.Extensions}.AsMechanism()
	}
	return nil
}

// Opts turns the settings into client options. Component-specific options are
// appended by the caller.
func (c Config) Opts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.SeedBrokers...),
		kgo.MetadataMaxAge(c.MetadataMaxAge),
		kgo.RequestTimeoutOverhead(c.RequestTimeout),
	}
	if c.MetadataMaxAge < defaultMetadataMinAge {
		// franz-go refuses a max age below its min age (5s by default).
		opts = append(opts, kgo.MetadataMinAge(max(c.MetadataMaxAge, minMetadataAge)))
	}
	if c.ClientID != "" {
		opts = append(opts, kgo.ClientID(c.ClientID))
	}
	if c.ConnIdleTimeout > 0 {
		opts = append(opts, kgo.ConnIdleTimeout(c.ConnIdleTimeout))
	}
	if c.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(c.TLS.Clone()))
	}
	if m := c.SASL.saslMechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	if c.ClientLogLevel != kgo.LogLevelNone && c.clientLog != nil {
		opts = append(opts, kgo.WithLogger(clientLogger{level: c.ClientLogLevel, log: c.clientLog}))
	}
	return opts
}

// Connect creates a client with the connection options plus extra, and checks
// that a broker answers and accepts the credentials before returning it. An
// authentication failure is returned once, naming the mechanism and user
// (never the password); Connector.Connect adds its class and back-off.
func (c Config) Connect(ctx context.Context, extra ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(append(c.Opts(), extra...)...)
	if err != nil {
		return nil, fmt.Errorf("creating kafka client for %v: %w", c.SeedBrokers, err)
	}
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		return nil, c.describeConnectError(err)
	}
	return cl, nil
}

// IsAuthError reports whether err is a SASL authentication failure, also
// behind a service.ErrBackOff (which does not unwrap).
func IsAuthError(err error) bool {
	var bo *service.ErrBackOff
	if errors.As(err, &bo) {
		err = bo.Err
	}
	return errors.Is(err, kerr.SaslAuthenticationFailed) ||
		errors.Is(err, kerr.IllegalSaslState) ||
		errors.Is(err, kerr.UnsupportedSaslMechanism)
}

func (c Config) describeConnectError(err error) error {
	if isTLSRefusal(err) {
		return fmt.Errorf("TLS handshake with kafka at %v failed: %s: %w", c.SeedBrokers, tlsProblem(err), err)
	}
	if c.SASL.Mechanism == "" || c.SASL.Mechanism == MechanismNone {
		return fmt.Errorf("connecting to kafka at %v: %w", c.SeedBrokers, err)
	}
	who := c.SASL.Username
	if c.SASL.Mechanism == MechanismOAuthBearer {
		who = "(bearer token)"
	}
	if IsAuthError(err) {
		return fmt.Errorf("kafka SASL authentication failed for mechanism %s, user %q at %v: %w",
			c.SASL.Mechanism, who, c.SeedBrokers, err)
	}
	// Some brokers (and kfake) drop the connection instead of answering a
	// failed authentication, so name the credentials in every failure.
	return fmt.Errorf("connecting to kafka at %v with SASL mechanism %s, user %q: %w",
		c.SeedBrokers, c.SASL.Mechanism, who, err)
}
