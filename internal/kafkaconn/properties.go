package kafkaconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/schema"
)

// TableConn is what a Flink table sets of the connection: its brokers and
// its Kafka client properties. The zero value sets nothing.
type TableConn struct {
	// Table is the table's name, for messages.
	Table string
	// Brokers are `properties.bootstrap.servers`, used when seed_brokers
	// is not written.
	Brokers []string
	// Properties are the table's Kafka client properties by name without
	// the `properties.` prefix (schema.Table.Properties). Those of the
	// connection are applied here; the component applies its own.
	Properties map[string]string
	// Contradiction returns the error for a written YAML field whose value
	// contradicts option optValue (table.Conflicts' wording); nil: a
	// plain wording.
	Contradiction func(field string, fieldValue any, option, optValue string) error
}

// Properties are the Kafka client properties applied to the connection,
// schema.ClientPropertyNames(schema.SideBoth).
var Properties = []string{
	schema.PropBootstrapServers, schema.PropGroupID, // applied by the components
	schema.PropSecurityProtocol, schema.PropSASLMechanism, schema.PropSASLJAASConfig,
	schema.PropTrustStoreType, schema.PropTrustStoreLocation, schema.PropTrustStoreCertificates, schema.PropTrustStorePassword,
	schema.PropKeyStoreType, schema.PropKeyStoreLocation, schema.PropKeyStoreCertChain, schema.PropKeyStoreKey,
	schema.PropKeyStorePassword, schema.PropKeyPassword, schema.PropEndpointIdentification,
	schema.PropClientID, schema.PropRequestTimeoutMs, schema.PropMetadataMaxAgeMs, schema.PropConnectionsMaxIdleMs,
}

// Security protocols (`security.protocol`).
const (
	protoPlaintext     = "PLAINTEXT"
	protoSSL           = "SSL"
	protoSASLPlaintext = "SASL_PLAINTEXT"
	protoSASLSSL       = "SASL_SSL"
)

// Names of the TLS store settings in messages: the YAML fields, or the
// table's properties.
var (
	yamlTrustNames = storeNames{
		typ: "field " + FieldTrustStore + "." + FieldStoreType, file: "field " + FieldTrustStore + "." + FieldStoreFile,
		pem: "field " + FieldTLS + "." + tlsFieldRootCAs, password: "field " + FieldTrustStore + "." + FieldStorePassword,
	}
	yamlKeyNames = storeNames{
		typ: "field " + FieldKeyStore + "." + FieldStoreType, file: "field " + FieldKeyStore + "." + FieldStoreFile,
		pem: "field " + FieldTLS + "." + tlsFieldClientCerts, key: "field " + FieldTLS + "." + tlsFieldClientCerts,
		password: "field " + FieldKeyStore + "." + FieldStorePassword, keyPassword: "field " + FieldKeyStore + "." + FieldStoreKeyPassword,
	}
)

func propNames(table string, typ, file, pem, key, password, keyPassword string) storeNames {
	o := func(p string) string {
		return fmt.Sprintf("option '%s%s' of table %s", schema.PropertyPrefix, p, table)
	}
	return storeNames{typ: o(typ), file: o(file), pem: o(pem), key: o(key), password: o(password), keyPassword: o(keyPassword)}
}

// apply sets c from the YAML fields y and the table's properties, and
// returns every problem: a property that contradicts a written field, a
// property that the security protocol leaves unused, a store that cannot
// be read.
func (tc TableConn) apply(c *Config, y yamlConn) []error {
	a := applier{tc: tc, p: tc.Properties}
	c.origin.table = tc.Table
	c.ClientID = y.clientID
	if v, ok := a.p[schema.PropClientID]; ok {
		if y.clientID != DefaultClientID && y.clientID != v {
			a.contradict(FieldClientID, y.clientID, schema.PropClientID)
		}
		c.ClientID = v
	}
	c.MetadataMaxAge = a.millis(schema.PropMetadataMaxAgeMs, FieldMetadataMaxAge, y.metadataMaxAge, DefaultMetadataMaxAge)
	c.RequestTimeout = a.millis(schema.PropRequestTimeoutMs, FieldRequestTimeout, y.requestTimeout, DefaultRequestTimeout)
	c.ConnIdleTimeout = a.millis(schema.PropConnectionsMaxIdleMs, FieldConnIdleTimeout, y.connIdleTimeout, DefaultConnIdleTimeout)

	tlsOn, saslOn := y.tls != nil, y.sasl.on()
	proto, protoSet := a.p[schema.PropSecurityProtocol]
	proto = strings.ToUpper(strings.TrimSpace(proto))
	if protoSet {
		wantTLS := proto == protoSSL || proto == protoSASLSSL
		wantSASL := proto == protoSASLPlaintext || proto == protoSASLSSL
		if tlsOn && !wantTLS {
			a.contradict(FieldTLS+"."+tlsFieldEnabled, true, schema.PropSecurityProtocol)
		}
		if saslOn && !wantSASL {
			a.contradict(FieldSASL+"."+FieldSASLMechanism, y.sasl.Mechanism, schema.PropSecurityProtocol)
		}
		tlsOn, saslOn = wantTLS, wantSASL
	}
	// What the Kafka client would ignore under the protocol is refused.
	for _, name := range slices.Sorted(maps.Keys(a.p)) {
		switch {
		case strings.HasPrefix(name, "ssl.") && !tlsOn:
			a.fail(FieldTLS, name, "needs 'properties.%s' = '%s' or '%s' (or field %s.%s: true): the Kafka client ignores ssl.* options otherwise",
				schema.PropSecurityProtocol, protoSSL, protoSASLSSL, FieldTLS, tlsFieldEnabled)
		case (name == schema.PropSASLMechanism || name == schema.PropSASLJAASConfig) && !saslOn:
			a.fail(FieldSASL, name, "needs 'properties.%s' = '%s' or '%s' (or field %s): the Kafka client ignores sasl.* options otherwise",
				schema.PropSecurityProtocol, protoSASLPlaintext, protoSASLSSL, FieldSASL)
		}
	}
	if !tlsOn {
		for _, f := range []struct {
			set   bool
			field string
		}{{y.trust.Set(), FieldTrustStore}, {y.key.Set(), FieldKeyStore}, {!y.verifyHostname, FieldTLSVerifyHostname}} {
			if f.set {
				a.errs = append(a.errs, fmt.Errorf("field %s: only used with TLS (field %s.%s: true, or a table's 'properties.%s' = '%s' or '%s')",
					f.field, FieldTLS, tlsFieldEnabled, schema.PropSecurityProtocol, protoSSL, protoSASLSSL))
			}
		}
	}
	if saslOn {
		a.sasl(c, y, protoSet, proto)
	}
	if tlsOn {
		a.tls(c, y)
	}
	return a.errs
}

// applier collects the problems of applying a table's properties.
type applier struct {
	tc   TableConn
	p    map[string]string
	errs []error
}

func (a *applier) option(name string) string { return schema.PropertyPrefix + name }

// contradict records that the written field (value fv) contradicts
// property name.
func (a *applier) contradict(field string, fv any, name string) {
	opt := a.option(name)
	v := schema.DisplayOptionValue(opt, a.p[name])
	if a.tc.Contradiction != nil {
		a.errs = append(a.errs, a.tc.Contradiction(field, fv, opt, v))
		return
	}
	a.errs = append(a.errs, fmt.Errorf("field %s: %v contradicts option '%s' = '%s' of table %s", field, fv, opt, v, a.tc.Table))
}

// fail records a problem of property name, prefixed with the field it
// sets.
func (a *applier) fail(field, name, format string, args ...any) {
	a.errs = append(a.errs, fmt.Errorf("field %s: table %s: option '%s': %s", field, a.tc.Table, a.option(name), fmt.Sprintf(format, args...)))
}

// millis applies a property in milliseconds to a duration field whose
// value from YAML is yv.
func (a *applier) millis(name, field string, yv time.Duration, def string) time.Duration {
	v, ok := a.p[name]
	if !ok {
		return yv
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		// schema's check reports it.
		return yv
	}
	d := time.Duration(n) * time.Millisecond
	if dd, _ := time.ParseDuration(def); yv != dd && yv != d {
		a.contradict(field, yv, name)
	}
	return d
}

// sasl applies sasl.mechanism and sasl.jaas.config.
func (a *applier) sasl(c *Config, y yamlConn, protoSet bool, proto string) {
	c.SASL = y.sasl
	if v, ok := a.p[schema.PropSASLMechanism]; ok {
		m := Mechanism(strings.ToUpper(strings.TrimSpace(v)))
		if y.sasl.on() && y.sasl.Mechanism != m {
			a.contradict(FieldSASL+"."+FieldSASLMechanism, y.sasl.Mechanism, schema.PropSASLMechanism)
		}
		c.SASL.Mechanism = m
		c.origin.tableSASL = true
	}
	if !c.SASL.on() {
		if protoSet {
			a.fail(FieldSASL, schema.PropSecurityProtocol, "'%s' needs a SASL mechanism: set 'properties.%s' (Kafka's default, GSSAPI, is not supported by connectd) or field %s.%s",
				proto, schema.PropSASLMechanism, FieldSASL, FieldSASLMechanism)
		}
		return
	}
	v, ok := a.p[schema.PropSASLJAASConfig]
	if !ok {
		return
	}
	c.origin.tableSASL = true
	j, err := ParseJAAS(v)
	if err == nil {
		var creds SASL
		if creds, err = j.Credentials(c.SASL.Mechanism); err == nil {
			a.setCredentials(c, y, creds)
			return
		}
	}
	a.fail(FieldSASL, schema.PropSASLJAASConfig, "%v", err)
	// The user is in the JAAS configuration: Validate must not also
	// report it missing.
	c.origin.jaasRefused = true
}

// setCredentials sets the credentials of a JAAS configuration, recording a
// contradiction with a written sasl field.
func (a *applier) setCredentials(c *Config, y yamlConn, creds SASL) {
	if y.sasl.Username != "" && y.sasl.Username != creds.Username {
		a.contradict(FieldSASL+"."+FieldSASLUsername, strconv.Quote(y.sasl.Username), schema.PropSASLJAASConfig)
	}
	if y.sasl.Password != "" && y.sasl.Password != creds.Password {
		a.contradict(FieldSASL+"."+FieldSASLPassword, "(secret)", schema.PropSASLJAASConfig)
	}
	c.SASL.Username, c.SASL.Password, c.SASL.ScramToken = creds.Username, creds.Password, creds.ScramToken
}

// hasAny reports whether any of the properties is set.
func (a *applier) hasAny(names ...string) bool {
	for _, n := range names {
		if _, ok := a.p[n]; ok {
			return true
		}
	}
	return false
}

// storeType reads a store type property; Kafka's default is JKS.
func (a *applier) storeType(name string) StoreType {
	if v, ok := a.p[name]; ok {
		return StoreType(strings.ToUpper(strings.TrimSpace(v)))
	}
	return StoreJKS
}

// tls builds the TLS settings from the tls field and the stores, the
// table's properties overriding what is not written.
func (a *applier) tls(c *Config, y yamlConn) {
	table := a.tc.Table
	c.origin.tableTLS = a.hasAny(schema.PropSecurityProtocol) || slices.ContainsFunc(slices.Collect(maps.Keys(a.p)), func(n string) bool {
		return strings.HasPrefix(n, "ssl.")
	})
	var errs []error
	if y.trust.Set() && (y.rootCAs != "" || y.rootCAsFile != "") {
		errs = append(errs, fmt.Errorf("field %s: %s.%s / %s.%s and %s are alternatives; set one",
			FieldTrustStore, FieldTLS, tlsFieldRootCAsFile, FieldTLS, tlsFieldRootCAs, FieldTrustStore))
	}
	if y.key.Set() && y.clientCerts {
		errs = append(errs, fmt.Errorf("field %s: %s.%s and %s are alternatives; set one", FieldKeyStore, FieldTLS, tlsFieldClientCerts, FieldKeyStore))
	}
	trust, trustNames := y.trust, yamlTrustNames
	if a.hasAny(schema.PropTrustStoreType, schema.PropTrustStoreLocation, schema.PropTrustStoreCertificates, schema.PropTrustStorePassword) {
		pt := TrustStore{Type: a.storeType(schema.PropTrustStoreType), File: a.p[schema.PropTrustStoreLocation],
			PEM: a.p[schema.PropTrustStoreCertificates], Password: a.p[schema.PropTrustStorePassword]}
		switch {
		case y.rootCAsFile != "" && !(pt.Type == StorePEM && pt.File == y.rootCAsFile && pt.PEM == ""):
			a.contradict(FieldTLS+"."+tlsFieldRootCAsFile, strconv.Quote(y.rootCAsFile), firstSet(a.p, schema.PropTrustStoreLocation, schema.PropTrustStoreCertificates, schema.PropTrustStoreType))
		case y.rootCAs != "" && !(pt.Type == StorePEM && pt.PEM == y.rootCAs && pt.File == ""):
			a.contradict(FieldTLS+"."+tlsFieldRootCAs, "(certificates)", firstSet(a.p, schema.PropTrustStoreCertificates, schema.PropTrustStoreLocation, schema.PropTrustStoreType))
		case y.trust.Set() && y.trust != pt:
			a.contradict(FieldTrustStore, fmt.Sprintf("%s %q", y.trust.Type, y.trust.File), firstSet(a.p, schema.PropTrustStoreLocation, schema.PropTrustStoreCertificates, schema.PropTrustStoreType))
		}
		trust = pt
		trustNames = propNames(table, schema.PropTrustStoreType, schema.PropTrustStoreLocation, schema.PropTrustStoreCertificates, "", schema.PropTrustStorePassword, "")
		if !trust.Set() {
			errs = append(errs, fmt.Errorf("%s or %s: required with the other ssl.truststore.* options", trustNames.file, trustNames.pem))
		}
	}
	key, keyNames := y.key, yamlKeyNames
	if a.hasAny(schema.PropKeyStoreType, schema.PropKeyStoreLocation, schema.PropKeyStoreCertChain, schema.PropKeyStoreKey,
		schema.PropKeyStorePassword, schema.PropKeyPassword) {
		pk := KeyStore{Type: a.storeType(schema.PropKeyStoreType), File: a.p[schema.PropKeyStoreLocation],
			CertificateChain: a.p[schema.PropKeyStoreCertChain], Key: a.p[schema.PropKeyStoreKey],
			Password: a.p[schema.PropKeyStorePassword], KeyPassword: a.p[schema.PropKeyPassword]}
		first := firstSet(a.p, schema.PropKeyStoreLocation, schema.PropKeyStoreCertChain, schema.PropKeyStoreKey, schema.PropKeyStoreType,
			schema.PropKeyStorePassword, schema.PropKeyPassword)
		switch {
		case y.clientCerts:
			a.contradict(FieldTLS+"."+tlsFieldClientCerts, "(client certificates)", first)
		case y.key.Set() && y.key != pk:
			a.contradict(FieldKeyStore, fmt.Sprintf("%s %q", y.key.Type, y.key.File), first)
		}
		key = pk
		keyNames = propNames(table, schema.PropKeyStoreType, schema.PropKeyStoreLocation, schema.PropKeyStoreCertChain,
			schema.PropKeyStoreKey, schema.PropKeyStorePassword, schema.PropKeyPassword)
		if !key.Set() {
			errs = append(errs, fmt.Errorf("%s or %s: required with the other ssl.keystore.* options", keyNames.file, keyNames.pem))
		}
	}
	verify := y.verifyHostname
	if v, ok := a.p[schema.PropEndpointIdentification]; ok {
		pv := strings.EqualFold(strings.TrimSpace(v), "https")
		if !y.verifyHostname && pv {
			a.contradict(FieldTLSVerifyHostname, false, schema.PropEndpointIdentification)
		}
		if y.skipVerify && pv {
			a.contradict(FieldTLS+"."+tlsFieldSkipCertVerify, true, schema.PropEndpointIdentification)
		}
		verify = pv
	}
	if trust.Set() {
		errs = append(errs, trust.validate(trustNames)...)
	}
	if key.Set() {
		errs = append(errs, key.validate(keyNames)...)
	}
	if len(errs) > 0 {
		a.errs = append(a.errs, inTLSField(errs...)...)
		return
	}
	cfg, err := buildTLS(y.tls, trust, trustNames, key, keyNames, verify)
	if err != nil {
		a.errs = append(a.errs, inTLSField(err)...)
		return
	}
	c.TLS = cfg
}

// inTLSField prefixes with the tls field the errors that name only a
// table's options, as every connection error names the field it sets.
func inTLSField(errs ...error) []error {
	out := make([]error, len(errs))
	for i, err := range errs {
		out[i] = err
		if !strings.HasPrefix(err.Error(), "field ") {
			out[i] = fmt.Errorf("field %s: %w", FieldTLS, err)
		}
	}
	return out
}

// firstSet returns the first of names that is set in p.
func firstSet(p map[string]string, names ...string) string {
	for _, n := range names {
		if _, ok := p[n]; ok {
			return n
		}
	}
	return names[0]
}

// buildTLS returns the TLS config: base (the tls field; nil: TLS 1.2 and
// up with the system's authorities), with the trust store's authorities,
// the key store's certificate, and without the host name check when
// verifyHostname is false (the chain is still verified).
func buildTLS(base *tls.Config, trust TrustStore, trustNames storeNames, key KeyStore, keyNames storeNames, verifyHostname bool) (*tls.Config, error) {
	var cfg *tls.Config
	if base != nil {
		cfg = base.Clone()
	} else {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	var errs []error
	if trust.Set() {
		pool, err := trust.Pool()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", trustNames.file, err))
		}
		cfg.RootCAs = pool
	}
	if key.Set() {
		cert, err := key.Certificate()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", keyNames.file, err))
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if !verifyHostname && !cfg.InsecureSkipVerify {
		roots := cfg.RootCAs
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifyChain(cs, roots)
		}
	}
	return cfg, nil
}

// verifyChain verifies the peer's certificate chain against roots (nil:
// the system's) without checking the host name, as Java's client does with
// `ssl.endpoint.identification.algorithm` empty.
func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the broker sent no certificate")
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
	for _, c := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(opts)
	return err
}
