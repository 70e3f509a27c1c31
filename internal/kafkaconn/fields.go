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
				"Flink option: `properties.client.id` (Flink derives it from `client.id.prefix`).").
			Default(DefaultClientID).
			Advanced(),
		service.NewTLSToggledField(FieldTLS).
			Description("TLS for broker connections. Disabled by default. Flink option: `properties.security.protocol=SSL` with the `properties.ssl.*` options."),
		service.NewObjectField(FieldSASL,
			service.NewStringEnumField(FieldSASLMechanism,
				MechanismNone, MechanismPlain, MechanismScramSHA256, MechanismScramSHA512, MechanismOAuthBearer).
				Description("SASL mechanism. Default `none` (no authentication). Flink option: `properties.sasl.mechanism`.").
				Default(MechanismNone),
			service.NewStringField(FieldSASLUsername).
				Description("User for PLAIN and SCRAM mechanisms. Default empty. Flink option: the `username` in `properties.sasl.jaas.config`.").
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
	}
}
