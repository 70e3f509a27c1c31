package kafkaconn

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// StoreType is the format of a trust store or key store, as Java's
// `ssl.truststore.type` and `ssl.keystore.type`.
type StoreType string

// Store formats. PKCS12 is read with software.sslmate.com/src/go-pkcs12,
// JKS with github.com/pavlo-v-chernykh/keystore-go.
const (
	StorePEM    StoreType = "PEM"
	StorePKCS12 StoreType = "PKCS12"
	StoreJKS    StoreType = "JKS"
)

// TrustStore holds the certificates of the authorities that sign the
// brokers' certificates (Java's `ssl.truststore.*`). The zero value trusts
// the system's authorities.
type TrustStore struct {
	Type StoreType
	// File is the store's path (`ssl.truststore.location`).
	File string
	// PEM is the certificates themselves (`ssl.truststore.certificates`),
	// with Type PEM only, instead of File.
	PEM string
	// Password (`ssl.truststore.password`): the integrity password of a
	// PKCS12 or JKS store; not used with PEM.
	Password string
}

// Set reports whether the store names certificates.
func (s TrustStore) Set() bool { return s.File != "" || s.PEM != "" }

// KeyStore holds the client's certificate chain and private key, for
// brokers that authenticate clients by certificate (Java's
// `ssl.keystore.*` and `ssl.key.password`). The zero value presents no
// certificate.
type KeyStore struct {
	Type StoreType
	// File is the store's path (`ssl.keystore.location`); a PEM file holds
	// the private key and the certificate chain.
	File string
	// CertificateChain and Key are the PEM chain and private key
	// themselves (`ssl.keystore.certificate.chain`, `ssl.keystore.key`),
	// with Type PEM only, instead of File.
	CertificateChain string
	Key              string
	// Password (`ssl.keystore.password`) of a PKCS12 or JKS store; not
	// used with PEM.
	Password string
	// KeyPassword (`ssl.key.password`) decrypts the private key: an
	// encrypted PKCS#8 PEM key, or a JKS key entry (default: Password).
	KeyPassword string
}

// Set reports whether the store names a certificate.
func (s KeyStore) Set() bool { return s.File != "" || s.CertificateChain != "" || s.Key != "" }

// validate returns the problems of the store's settings without reading
// files, each naming what to change in names (the field or option of each
// setting).
func (s TrustStore) validate(n storeNames) []error {
	var errs []error
	switch s.Type {
	case StorePEM:
		if s.Password != "" {
			errs = append(errs, fmt.Errorf("%s: not used with a PEM trust store (as in Kafka); leave it out", n.password))
		}
		if s.File != "" && s.PEM != "" {
			errs = append(errs, fmt.Errorf("%s and %s are alternatives; set one", n.file, n.pem))
		}
	case StorePKCS12, StoreJKS:
		if s.PEM != "" {
			errs = append(errs, fmt.Errorf("%s: only with %s PEM (as in Kafka)", n.pem, n.typ))
		}
		if s.File == "" && s.Set() {
			errs = append(errs, fmt.Errorf("%s: required with %s %s", n.file, n.typ, s.Type))
		}
		if s.Type == StoreJKS && s.Password == "" && s.File != "" {
			errs = append(errs, fmt.Errorf("%s: required with %s JKS (connectd checks the store's integrity with it)", n.password, n.typ))
		}
	default:
		errs = append(errs, fmt.Errorf("%s: unknown store type %q (want PEM, PKCS12 or JKS)", n.typ, s.Type))
	}
	return errs
}

func (s KeyStore) validate(n storeNames) []error {
	var errs []error
	switch s.Type {
	case StorePEM:
		if s.Password != "" {
			errs = append(errs, fmt.Errorf("%s: not used with a PEM key store (as in Kafka: an encrypted key takes %s)", n.password, n.keyPassword))
		}
		if s.File != "" && (s.CertificateChain != "" || s.Key != "") {
			errs = append(errs, fmt.Errorf("%s and %s / %s are alternatives; set one", n.file, n.pem, n.key))
		}
		if s.File == "" && (s.CertificateChain == "") != (s.Key == "") {
			errs = append(errs, fmt.Errorf("%s and %s go together", n.pem, n.key))
		}
	case StorePKCS12, StoreJKS:
		if s.CertificateChain != "" || s.Key != "" {
			errs = append(errs, fmt.Errorf("%s and %s: only with %s PEM (as in Kafka)", n.pem, n.key, n.typ))
		}
		if s.File == "" && s.Set() {
			errs = append(errs, fmt.Errorf("%s: required with %s %s", n.file, n.typ, s.Type))
		}
		if s.Type == StorePKCS12 && s.KeyPassword != "" && s.KeyPassword != s.Password {
			errs = append(errs, fmt.Errorf("%s: a PKCS12 store whose key password differs from its store password is not supported; "+
				"re-export it with one password", n.keyPassword))
		}
	default:
		errs = append(errs, fmt.Errorf("%s: unknown store type %q (want PEM, PKCS12 or JKS)", n.typ, s.Type))
	}
	return errs
}

// storeNames are the names of a store's settings in errors: YAML fields or
// table options.
type storeNames struct {
	typ, file, pem, key, password, keyPassword string
}

// Pool reads the trusted certificates. Errors name the file, never a
// password.
func (s TrustStore) Pool() (*x509.CertPool, error) {
	data := []byte(s.PEM)
	if s.File != "" {
		var err error
		if data, err = os.ReadFile(s.File); err != nil {
			return nil, err
		}
	}
	var certs []*x509.Certificate
	var err error
	switch s.Type {
	case StorePEM:
		certs, err = pemCertificates(data)
	case StorePKCS12:
		certs, err = pkcs12.DecodeTrustStore(data, s.Password)
		if err != nil {
			err = fmt.Errorf("reading PKCS12 trust store: %w", err)
		}
	case StoreJKS:
		certs, err = jksTrusted(data, s.Password)
	default:
		err = fmt.Errorf("unknown store type %q", s.Type)
	}
	if err == nil && len(certs) == 0 {
		err = errors.New("holds no certificate")
	}
	if err != nil {
		if s.File != "" {
			return nil, fmt.Errorf("%s: %w", s.File, err)
		}
		return nil, err
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// Certificate reads the client certificate chain and its private key.
func (s KeyStore) Certificate() (tls.Certificate, error) {
	wrap := func(err error) (tls.Certificate, error) {
		if s.File != "" {
			return tls.Certificate{}, fmt.Errorf("%s: %w", s.File, err)
		}
		return tls.Certificate{}, err
	}
	var data []byte
	if s.File != "" {
		var err error
		if data, err = os.ReadFile(s.File); err != nil {
			return tls.Certificate{}, err
		}
	}
	keyPassword := s.KeyPassword
	if keyPassword == "" {
		keyPassword = s.Password
	}
	switch s.Type {
	case StorePEM:
		if s.File == "" {
			data = []byte(s.CertificateChain + "\n" + s.Key)
		}
		cert, err := pemKeyPair(data, s.KeyPassword)
		if err != nil {
			return wrap(err)
		}
		return cert, nil
	case StorePKCS12:
		key, leaf, chain, err := pkcs12.DecodeChain(data, s.Password)
		if err != nil {
			return wrap(fmt.Errorf("reading PKCS12 key store: %w", err))
		}
		cert := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
		for _, c := range chain {
			cert.Certificate = append(cert.Certificate, c.Raw)
		}
		return cert, nil
	case StoreJKS:
		cert, err := jksKeyPair(data, s.Password, keyPassword)
		if err != nil {
			return wrap(err)
		}
		return cert, nil
	}
	return wrap(fmt.Errorf("unknown store type %q", s.Type))
}

// pemCertificates reads every CERTIFICATE block of data.
func pemCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 && !bytes.Contains(data, []byte("-----BEGIN")) && len(bytes.TrimSpace(data)) > 0 {
		return nil, errors.New("not PEM (no -----BEGIN CERTIFICATE----- block); for a PKCS12 or JKS file set the store type")
	}
	return certs, nil
}

// pemKeyPair reads a certificate chain and one private key from PEM data:
// an unencrypted key (PKCS#8, PKCS#1 or SEC 1) or, with password, an
// encrypted PKCS#8 key, as Kafka's PEM key store.
func pemKeyPair(data []byte, password string) (tls.Certificate, error) {
	var (
		cert tls.Certificate
		keys int
	)
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch b.Type {
		case "CERTIFICATE":
			cert.Certificate = append(cert.Certificate, b.Bytes)
		case "ENCRYPTED PRIVATE KEY":
			keys++
			if password == "" {
				return tls.Certificate{}, errors.New("the private key is encrypted and no key password is set")
			}
			k, err := pkcs8.ParsePKCS8PrivateKey(b.Bytes, []byte(password))
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("decrypting the private key (wrong key password?): %w", err)
			}
			cert.PrivateKey = k
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
			keys++
			k, err := parsePrivateKey(b)
			if err != nil {
				return tls.Certificate{}, err
			}
			cert.PrivateKey = k
		}
	}
	switch {
	case len(cert.Certificate) == 0:
		return tls.Certificate{}, errors.New("no certificate (want a -----BEGIN CERTIFICATE----- block)")
	case keys == 0:
		return tls.Certificate{}, errors.New("no private key (want a -----BEGIN PRIVATE KEY----- block)")
	case keys > 1:
		return tls.Certificate{}, fmt.Errorf("%d private keys; want one", keys)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("the first certificate: %w", err)
	}
	cert.Leaf = leaf
	return cert, nil
}

func parsePrivateKey(b *pem.Block) (any, error) {
	switch b.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(b.Bytes)
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the private key: %w", err)
	}
	return k, nil
}

// jksTrusted reads the trusted certificate entries of a JKS store.
func jksTrusted(data []byte, password string) ([]*x509.Certificate, error) {
	ks := keystore.New(keystore.WithOrderedAliases())
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return nil, fmt.Errorf("reading JKS store (wrong password?): %w", err)
	}
	var certs []*x509.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsTrustedCertificateEntry(alias) {
			continue
		}
		e, err := ks.GetTrustedCertificateEntry(alias)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		c, err := x509.ParseCertificate(e.Certificate.Content)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

// jksKeyPair reads the one private key entry of a JKS store.
func jksKeyPair(data []byte, password, keyPassword string) (tls.Certificate, error) {
	ks := keystore.New(keystore.WithOrderedAliases())
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return tls.Certificate{}, fmt.Errorf("reading JKS store (wrong password?): %w", err)
	}
	aliases := slices.DeleteFunc(ks.Aliases(), func(a string) bool { return !ks.IsPrivateKeyEntry(a) })
	switch len(aliases) {
	case 0:
		return tls.Certificate{}, errors.New("holds no private key entry")
	case 1:
	default:
		return tls.Certificate{}, fmt.Errorf("holds %d private key entries (%v); connectd needs exactly one", len(aliases), aliases)
	}
	e, err := ks.GetPrivateKeyEntry(aliases[0], []byte(keyPassword))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("entry %q (wrong key password?): %w", aliases[0], err)
	}
	key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("entry %q: the private key: %w", aliases[0], err)
	}
	cert := tls.Certificate{PrivateKey: key}
	for _, c := range e.CertificateChain {
		cert.Certificate = append(cert.Certificate, c.Content)
	}
	if len(cert.Certificate) == 0 {
		return tls.Certificate{}, fmt.Errorf("entry %q has no certificate", aliases[0])
	}
	if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
		return tls.Certificate{}, fmt.Errorf("entry %q: %w", aliases[0], err)
	}
	return cert, nil
}
