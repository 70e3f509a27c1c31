package kafkaconn

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// testCA is a throwaway certificate authority and one leaf it signed.
type testCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	leaf    *x509.Certificate
	leafKey *ecdsa.PrivateKey
}

func newTestCA(t *testing.T, cn string) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := testCA{key: key}
	if ca.cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	if ca.leafKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}, DNSNames: []string{"localhost"}}
	der, err = x509.CreateCertificate(rand.Reader, leafTmpl, ca.cert, &ca.leafKey.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if ca.leaf, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	return ca
}

func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// selfSignedCA returns the PEM certificate of a new CA.
func selfSignedCA(t *testing.T, cn string) []byte { return certPEM(newTestCA(t, cn).cert) }

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// jksOf writes a JKS store holding ca as a trusted certificate, and the
// leaf with its key (key password keyPass) when withKey.
func jksOf(t *testing.T, ca testCA, storePass, keyPass string, withKey bool) []byte {
	t.Helper()
	ks := keystore.New()
	if err := ks.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{CreationTime: time.Now(),
		Certificate: keystore.Certificate{Type: "X509", Content: ca.cert.Raw}}); err != nil {
		t.Fatal(err)
	}
	if withKey {
		der, err := x509.MarshalPKCS8PrivateKey(ca.leafKey)
		if err != nil {
			t.Fatal(err)
		}
		if err := ks.SetPrivateKeyEntry("client", keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: der,
			CertificateChain: []keystore.Certificate{{Type: "X509", Content: ca.leaf.Raw}, {Type: "X509", Content: ca.cert.Raw}}},
			[]byte(keyPass)); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := ks.Store(&b, []byte(storePass)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Each trust store format yields a pool that verifies the leaf of its CA
// (and not another CA's); a wrong password is an error naming the file and
// never the password.
func TestTrustStores(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "trusted")
	other := newTestCA(t, "other")
	p12, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.cert}, "store-secret")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		store TrustStore
	}{
		{"PEM file", TrustStore{Type: StorePEM, File: writeTemp(t, "ca.pem", certPEM(ca.cert))}},
		{"PEM inline", TrustStore{Type: StorePEM, PEM: string(certPEM(ca.cert))}},
		{"PKCS12", TrustStore{Type: StorePKCS12, File: writeTemp(t, "ca.p12", p12), Password: "store-secret"}},
		{"JKS", TrustStore{Type: StoreJKS, File: writeTemp(t, "ca.jks", jksOf(t, ca, "store-secret", "", false)), Password: "store-secret"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool, err := tc.store.Pool()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ca.leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
				t.Errorf("the CA's leaf does not verify: %v", err)
			}
			if _, err := other.leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err == nil {
				t.Error("another CA's leaf verifies")
			}
			if tc.store.Password == "" {
				return
			}
			bad := tc.store
			bad.Password = "wrong-secret"
			_, err = bad.Pool()
			if err == nil {
				t.Fatal("a wrong store password was accepted")
			}
			if !strings.Contains(err.Error(), tc.store.File) || strings.Contains(err.Error(), "secret") {
				t.Errorf("error should name the file and no password: %v", err)
			}
		})
	}
	// A PKCS12 file read as PEM (Kafka's default type is JKS, so a user may
	// leave the type out): the error says to set the type.
	_, err = TrustStore{Type: StorePEM, File: writeTemp(t, "ca.p12", p12)}.Pool()
	if err == nil || !strings.Contains(err.Error(), "set the store type") {
		t.Errorf("binary store read as PEM: %v", err)
	}
}

// Each key store format yields the leaf certificate with its chain and the
// matching private key.
func TestKeyStores(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "trusted")
	keyDER, err := x509.MarshalPKCS8PrivateKey(ca.leafKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	encDER, err := pkcs8.MarshalPrivateKey(ca.leafKey, []byte("key-secret"), nil)
	if err != nil {
		t.Fatal(err)
	}
	encPEM := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: encDER})
	chain := append(certPEM(ca.leaf), certPEM(ca.cert)...)
	p12, err := pkcs12.Modern.Encode(ca.leafKey, ca.leaf, []*x509.Certificate{ca.cert}, "store-secret")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		store   KeyStore
		wantErr string
	}{
		{"PEM file", KeyStore{Type: StorePEM, File: writeTemp(t, "client.pem", append(append([]byte{}, keyPEM...), chain...))}, ""},
		{"PEM inline", KeyStore{Type: StorePEM, CertificateChain: string(chain), Key: string(keyPEM)}, ""},
		{"PEM encrypted key", KeyStore{Type: StorePEM, CertificateChain: string(chain), Key: string(encPEM), KeyPassword: "key-secret"}, ""},
		{"PEM encrypted key, no password", KeyStore{Type: StorePEM, CertificateChain: string(chain), Key: string(encPEM)},
			"the private key is encrypted and no key password is set"},
		{"PEM encrypted key, wrong password", KeyStore{Type: StorePEM, CertificateChain: string(chain), Key: string(encPEM), KeyPassword: "nope"},
			"wrong key password?"},
		{"PKCS12", KeyStore{Type: StorePKCS12, File: writeTemp(t, "client.p12", p12), Password: "store-secret"}, ""},
		{"JKS", KeyStore{Type: StoreJKS, File: writeTemp(t, "client.jks", jksOf(t, ca, "store-secret", "key-secret", true)),
			Password: "store-secret", KeyPassword: "key-secret"}, ""},
		{"JKS, key password defaults to the store's", KeyStore{Type: StoreJKS,
			File: writeTemp(t, "same.jks", jksOf(t, ca, "store-secret", "store-secret", true)), Password: "store-secret"}, ""},
		{"JKS, wrong key password", KeyStore{Type: StoreJKS, File: writeTemp(t, "client2.jks", jksOf(t, ca, "store-secret", "key-secret", true)),
			Password: "store-secret", KeyPassword: "nope"}, "wrong key password?"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cert, err := tc.store.Certificate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error with %q, got %v", tc.wantErr, err)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("error shows a password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cert.Certificate) != 2 || !bytes.Equal(cert.Certificate[0], ca.leaf.Raw) || !bytes.Equal(cert.Certificate[1], ca.cert.Raw) {
				t.Errorf("chain has %d certificates, want the leaf and the CA", len(cert.Certificate))
			}
			k, ok := cert.PrivateKey.(*ecdsa.PrivateKey)
			if !ok || !k.Equal(ca.leafKey) {
				t.Errorf("private key %T is not the leaf's", cert.PrivateKey)
			}
			// crypto/tls accepts the pair.
			if _, err := tls.X509KeyPair(append(certPEM(ca.leaf), keyPEM...), keyPEM); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The settings of a store are checked without reading files, each problem
// naming the setting.
func TestStoreValidate(t *testing.T) {
	t.Parallel()
	n := storeNames{typ: "T", file: "F", pem: "P", key: "K", password: "W", keyPassword: "KW"}
	cases := []struct {
		name string
		errs []error
		want []string
	}{
		{"PEM with a password", TrustStore{Type: StorePEM, File: "x", Password: "p"}.validate(n), []string{"W: not used with a PEM trust store"}},
		{"PEM file and inline", TrustStore{Type: StorePEM, File: "x", PEM: "y"}.validate(n), []string{"F and P are alternatives"}},
		{"inline with JKS", TrustStore{Type: StoreJKS, PEM: "y"}.validate(n), []string{"P: only with T PEM", "F: required with T JKS"}},
		{"JKS without password", TrustStore{Type: StoreJKS, File: "x"}.validate(n), []string{"W: required with T JKS"}},
		{"unknown type", TrustStore{Type: "BKS", File: "x"}.validate(n), []string{`T: unknown store type "BKS"`}},
		{"key without chain", KeyStore{Type: StorePEM, Key: "k"}.validate(n), []string{"P and K go together"}},
		{"PKCS12 key password", KeyStore{Type: StorePKCS12, File: "x", Password: "a", KeyPassword: "b"}.validate(n),
			[]string{"KW: a PKCS12 store whose key password differs"}},
	}
	for _, tc := range cases {
		var msgs []string
		for _, e := range tc.errs {
			msgs = append(msgs, e.Error())
		}
		got := strings.Join(msgs, "\n")
		if len(tc.errs) != len(tc.want) {
			t.Errorf("%s: %d problems, want %d:\n%s", tc.name, len(tc.errs), len(tc.want), got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: lacks %q:\n%s", tc.name, w, got)
			}
		}
	}
}

// tls_verify_hostname false (Java's empty
// ssl.endpoint.identification.algorithm) skips only the host name check:
// a certificate for another name is accepted, one from another CA is not.
func TestVerifyHostnameOff(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "trusted") // its leaf names localhost, not 127.0.0.1
	other := newTestCA(t, "other")
	serve := func(t *testing.T, c testCA) string {
		t.Helper()
		ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{
			Certificate: [][]byte{c.leaf.Raw}, PrivateKey: c.leafKey}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				_ = conn.(*tls.Conn).Handshake()
				conn.Close()
			}
		}()
		return ln.Addr().String()
	}
	trust := TrustStore{Type: StorePEM, PEM: string(certPEM(ca.cert))}
	dial := func(addr string, verifyHostname bool) error {
		cfg, err := buildTLS(nil, trust, yamlTrustNames, KeyStore{}, yamlKeyNames, verifyHostname)
		if err != nil {
			return err
		}
		conn, err := tls.Dial("tcp", addr, cfg)
		if err == nil {
			conn.Close()
		}
		return err
	}
	good, bad := serve(t, ca), serve(t, other)
	if err := dial(good, true); err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("host name check on: a certificate for localhost was accepted at 127.0.0.1: %v", err)
	}
	if err := dial(good, false); err != nil {
		t.Errorf("host name check off: %v", err)
	}
	if err := dial(bad, false); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("host name check off: another CA's certificate: %v", err)
	}
}
