// Package kafkaconn holds the Kafka connection settings shared by every
// connectd Kafka component: the config fields (seed brokers, client id, TLS,
// SASL, metadata refresh, request timeout), their parsing into a typed Config,
// and the one place where that Config becomes []kgo.Opt.
package kafkaconn

import (
	"github.com/redpanda-data/benthos/v4/public/service"
)

// Field names, shared by every component that embeds the connection fields.
const (
	FieldSeedBrokers     = "seed_brokers"
	FieldClientID        = "client_id"
	FieldTLS             = "tls"
	FieldSASL            = "sasl"
	FieldSASLMechanism   = "mechanism"
	FieldSASLUsername    = "username"
	FieldSASLPassword    = "password"
	FieldSASLToken       = "token"
	FieldSASLExtensions  = "extensions"
	FieldMetadataMaxAge  = "metadata_max_age"
	FieldRequestTimeout  = "request_timeout_overhead"
	FieldConnIdleTimeout = "conn_idle_timeout"
	FieldClientLogLevel  = "client_log_level"

	FieldTrustStore        = "tls_truststore"
	FieldKeyStore          = "tls_keystore"
	FieldStoreType         = "type"
	FieldStoreFile         = "file"
	FieldStorePassword     = "password"
	FieldStoreKeyPassword  = "key_password"
	FieldTLSVerifyHostname = "tls_verify_hostname"
	defaultStoreType       = StorePKCS12
	tlsFieldRootCAs        = "root_cas"
	tlsFieldRootCAsFile    = "root_cas_file"
	tlsFieldClientCerts    = "client_certs"
	tlsFieldSkipCertVerify = "skip_cert_verify"
	tlsFieldEnabled        = "enabled"
)

// Defaults of the connection fields, declared once: the spec uses them.
const (
	DefaultClientID        = "connectd"
	DefaultMetadataMaxAge  = "5m"
	DefaultRequestTimeout  = "10s"
	DefaultConnIdleTimeout = "20s"
)

// SASL mechanism names as written in config.
const (
	MechanismNone        = "none"
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
	MechanismOAuthBearer = "OAUTHBEARER"
)

// Fields returns the connection fields, to be spliced into a component's spec
// with service.NewConfigSpec().Fields(kafkaconn.Fields()...).
func Fields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewStringListField(FieldSeedBrokers).
			Description("Kafka bootstrap addresses as `host:port`. An entry may hold several addresses separated by commas. " +
				"No default: at least one address is required, here or (for components with a `table`) in the table's " +
				"`properties.bootstrap.servers`. Flink option: `properties.bootstrap.servers`.").
			Example([]string{"localhost:9092"}).
			Example([]string{"broker-1:9092,broker-2:9092"}).
			Optional(),
		service.NewStringField(FieldClientID).
			Description("Client id sent with every request, visible in broker logs and quotas. Default `connectd`. " +
				"Flink option: `properties.client.id`.").
			Default(DefaultClientID).
			Advanced(),
		service.NewTLSToggledField(FieldTLS).
			Description("TLS for broker connections. Disabled by default. `root_cas` / `root_cas_file` are the PEM trust store, " +
				"`client_certs` the PEM key store; see also `tls_truststore`, `tls_keystore` and `tls_verify_hostname`. " +
				"A certificate that does not verify ends the run at connect (exit 1), naming the certificate problem. " +
				"Flink option: `properties.security.protocol` = `SSL` or `SASL_SSL`; `root_cas_file` is `properties.ssl.truststore.location` " +
				"and `root_cas` is `properties.ssl.truststore.certificates` (with `properties.ssl.truststore.type` = `PEM`), " +
				"`client_certs` is `properties.ssl.keystore.certificate.chain` and `properties.ssl.keystore.key` (type `PEM`)."),
		service.NewObjectField(FieldTrustStore,
			service.NewStringEnumField(FieldStoreType, string(StorePKCS12), string(StoreJKS), string(StorePEM)).
				Description("Format of the file: `PKCS12`, `JKS` or `PEM`. Default `PKCS12`. Flink option: `properties.ssl.truststore.type` "+
					"(whose default is JKS, as in Kafka).").
				Default(string(defaultStoreType)),
			service.NewStringField(FieldStoreFile).
				Description("Path of the trust store. Required. Flink option: `properties.ssl.truststore.location`."),
			service.NewStringField(FieldStorePassword).
				Description("Password of a PKCS12 or JKS store (its integrity check; required for JKS). Default empty. Never logged. "+
					"Flink option: `properties.ssl.truststore.password`.").
				Default("").
				Secret(),
		).
			Description("A Java-style trust store with the certificates of the authorities that sign the brokers' certificates, for TLS " +
				"(`tls.enabled`). For PEM, `tls.root_cas_file` does the same; set one of them. Read with " +
				"software.sslmate.com/src/go-pkcs12 (PKCS12) and github.com/pavlo-v-chernykh/keystore-go (JKS: its trusted certificate entries). " +
				"Default: absent, the `tls` settings (else the system's authorities). Flink option: `properties.ssl.truststore.*`.").
			Optional().
			Advanced(),
		service.NewObjectField(FieldKeyStore,
			service.NewStringEnumField(FieldStoreType, string(StorePKCS12), string(StoreJKS), string(StorePEM)).
				Description("Format of the file: `PKCS12`, `JKS` or `PEM` (the private key and the certificate chain). Default `PKCS12`. "+
					"Flink option: `properties.ssl.keystore.type` (whose default is JKS, as in Kafka).").
				Default(string(defaultStoreType)),
			service.NewStringField(FieldStoreFile).
				Description("Path of the key store. Required. Flink option: `properties.ssl.keystore.location`."),
			service.NewStringField(FieldStorePassword).
				Description("Password of a PKCS12 or JKS store. Default empty. Never logged. Flink option: `properties.ssl.keystore.password`.").
				Default("").
				Secret(),
			service.NewStringField(FieldStoreKeyPassword).
				Description("Password of the private key: of a JKS key entry (default: `password`), or of an encrypted PKCS#8 key in a PEM file. "+
					"Default empty. Never logged. Flink option: `properties.ssl.key.password`.").
				Default("").
				Secret(),
		).
			Description("A Java-style key store with the client's certificate and private key, for brokers that authenticate clients by " +
				"certificate (TLS client authentication). The store must hold exactly one private key. For PEM files, `tls.client_certs` " +
				"does the same; set one of them. Default: absent, no client certificate. Flink option: `properties.ssl.keystore.*` " +
				"and `properties.ssl.key.password`.").
			Optional().
			Advanced(),
		service.NewBoolField(FieldTLSVerifyHostname).
			Description("Check that a broker's certificate names the host connected to. `false` still checks that the certificate " +
				"chains to a trusted authority (unlike `tls.skip_cert_verify`, which checks nothing). Default `true`. " +
				"Flink option: `properties.ssl.endpoint.identification.algorithm` (`https`: true; empty: false).").
			Default(true).
			Advanced(),
		service.NewObjectField(FieldSASL,
			service.NewStringEnumField(FieldSASLMechanism,
				MechanismNone, MechanismPlain, MechanismScramSHA256, MechanismScramSHA512, MechanismOAuthBearer).
				Description("SASL mechanism. Default `none` (no authentication). Flink option: `properties.sasl.mechanism` "+
					"(with `properties.security.protocol` = `SASL_PLAINTEXT` or `SASL_SSL`).").
				Default(MechanismNone),
			service.NewStringField(FieldSASLUsername).
				Description("User for PLAIN and SCRAM mechanisms. Default empty. Flink option: the `username` of `properties.sasl.jaas.config` "+
					"(`org.apache.kafka.common.security.plain.PlainLoginModule required username=\"...\" password=\"...\";`, or the `ScramLoginModule` form).").
				Default(""),
			service.NewStringField(FieldSASLPassword).
				Description("Password for PLAIN and SCRAM mechanisms. Default empty. Never logged. Flink option: the `password` in `properties.sasl.jaas.config`.").
				Default("").
				Secret(),
			service.NewStringField(FieldSASLToken).
				Description("Bearer token for OAUTHBEARER. Default empty. Never logged. Flink option: the token returned by `properties.sasl.login.callback.handler.class`.").
				Default("").
				Secret(),
			service.NewStringMapField(FieldSASLExtensions).
				Description("SASL extensions for OAUTHBEARER (key/value pairs). Default none. Flink option: the extension entries of `properties.sasl.jaas.config` (`OAuthBearerLoginModule`).").
				Optional().
				Advanced(),
		).
			Description("SASL authentication. Default: absent, no authentication. A rejected login is logged naming the mechanism and user " +
				"and retried, the wait doubling from 1s to 1m; kafka_sink ends the run instead (exit 1, naming these fields) when the " +
				"brokers never accepted the credentials in this run. " +
				"Flink option: `properties.security.protocol=SASL_PLAINTEXT|SASL_SSL` with `properties.sasl.*`.").
			Optional(),
		service.NewDurationField(FieldMetadataMaxAge).
			Description("Maximum age of cached cluster metadata before it is refreshed (Go duration). Default `5m`. " +
				"Flink option: `properties.metadata.max.age.ms`.").
			Default(DefaultMetadataMaxAge).
			Advanced(),
		service.NewDurationField(FieldRequestTimeout).
			Description("Time added to a request's own timeout before the client gives up on it (Go duration). Default `10s`. " +
				"Flink option: `properties.request.timeout.ms`.").
			Default(DefaultRequestTimeout).
			Advanced(),
		service.NewDurationField(FieldConnIdleTimeout).
			Description("Idle time after which a broker connection is closed (Go duration). Default `20s`. " +
				"Flink option: `properties.connections.max.idle.ms`.").
			Default(DefaultConnIdleTimeout).
			Advanced(),
		service.NewStringEnumField(FieldClientLogLevel, ClientLogNone, ClientLogError, ClientLogWarn, ClientLogInfo, ClientLogDebug).
			Description("Writes the Kafka client's own log lines (franz-go: connections, metadata, fetch sessions, group " +
				"membership, transactions) at this level and above into connectd's log, prefixed `kafka client:`, each at its own " +
				"level, so `logger.level` must let them through too (`debug` lines need `logger: {level: DEBUG}`). For diagnosing " +
				"connection, rebalance and transaction problems; `debug` is verbose (several lines per request). Default `none`. " +
				"Flink option: none (in Flink, the log4j logger `org.apache.kafka` set to DEBUG).").
			Default(ClientLogNone).
			Advanced(),
	}
}
