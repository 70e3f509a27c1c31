package schema

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Kafka client properties: a table's `properties.*` options, which Flink
// hands to the Kafka clients as they are. connectd maps each property it
// knows onto the field of its components that has the same meaning
// (internal/kafkaconn for the connection, kafka_source and kafka_sink for
// the rest), refuses the Java-only ones with the reason, and refuses any
// other by name: a property is never silently ignored.

// PropertyPrefix is the prefix of the Kafka client property options.
const PropertyPrefix = "properties."

// PropertySide says which component applies a property. A property of the
// other side is accepted and unused, as the Kafka clients do (a table is
// often both read and written).
type PropertySide uint8

const (
	// SideBoth: the connection, applied by kafka_source and kafka_sink.
	SideBoth PropertySide = iota
	// SideSource: the consumer, applied by kafka_source.
	SideSource
	// SideSink: the producer, applied by kafka_sink.
	SideSink
)

func (s PropertySide) String() string {
	switch s {
	case SideSource:
		return "kafka_source"
	case SideSink:
		return "kafka_sink"
	}
	return "kafka_source, kafka_sink"
}

// Kafka client property names (without the `properties.` prefix).
const (
	PropBootstrapServers       = "bootstrap.servers"
	PropGroupID                = "group.id"
	PropSecurityProtocol       = "security.protocol"
	PropSASLMechanism          = "sasl.mechanism"
	PropSASLJAASConfig         = "sasl.jaas.config"
	PropTrustStoreType         = "ssl.truststore.type"
	PropTrustStoreLocation     = "ssl.truststore.location"
	PropTrustStoreCertificates = "ssl.truststore.certificates"
	PropTrustStorePassword     = "ssl.truststore.password"
	PropKeyStoreType           = "ssl.keystore.type"
	PropKeyStoreLocation       = "ssl.keystore.location"
	PropKeyStoreCertChain      = "ssl.keystore.certificate.chain"
	PropKeyStoreKey            = "ssl.keystore.key"
	PropKeyStorePassword       = "ssl.keystore.password"
	PropKeyPassword            = "ssl.key.password"
	PropEndpointIdentification = "ssl.endpoint.identification.algorithm"
	PropClientID               = "client.id"
	PropRequestTimeoutMs       = "request.timeout.ms"
	PropMetadataMaxAgeMs       = "metadata.max.age.ms"
	PropConnectionsMaxIdleMs   = "connections.max.idle.ms"

	PropIsolationLevel         = "isolation.level"
	PropAutoOffsetReset        = "auto.offset.reset"
	PropClientRack             = "client.rack"
	PropFetchMinBytes          = "fetch.min.bytes"
	PropFetchMaxWaitMs         = "fetch.max.wait.ms"
	PropMaxPartitionFetchBytes = "max.partition.fetch.bytes"
	PropFetchMaxBytes          = "fetch.max.bytes"
	PropSessionTimeoutMs       = "session.timeout.ms"
	PropHeartbeatIntervalMs    = "heartbeat.interval.ms"
	PropGroupInstanceID        = "group.instance.id"
	PropMaxPollRecords         = "max.poll.records"
	PropGroupProtocol          = "group.protocol"

	PropTransactionTimeoutMs = "transaction.timeout.ms"
	PropCompressionType      = "compression.type"
	PropAcks                 = "acks"
	PropEnableIdempotence    = "enable.idempotence"
	PropLingerMs             = "linger.ms"
	PropBatchSize            = "batch.size"
	PropMaxRequestSize       = "max.request.size"
	PropDeliveryTimeoutMs    = "delivery.timeout.ms"
	PropAllowAutoCreate      = "allow.auto.create.topics"
)

// clientProperty is a Kafka client property connectd applies.
type clientProperty struct {
	side  PropertySide
	check check
	// maps says what the property sets in connectd (field, behaviour),
	// for the docs.
	maps string
	// secret: the value is never shown (a password, a private key).
	secret bool
}

// clientProperties are the Kafka client properties connectd applies, by
// name without the prefix. bootstrap.servers and group.id are connector
// options (OptBootstrapServers, OptGroupID) and are listed for the docs.
var clientProperties = map[string]clientProperty{
	PropBootstrapServers: {SideBoth, nonEmpty, "`seed_brokers`", false},
	PropGroupID:          {SideBoth, nonEmpty, "kafka_source `consumer_group` (unused by kafka_sink, as in Flink)", false},
	PropSecurityProtocol: {SideBoth, enumFold("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
		"`tls.enabled` (SSL, SASL_SSL) and `sasl` (SASL_PLAINTEXT, SASL_SSL); default PLAINTEXT", false},
	PropSASLMechanism: {SideBoth, saslMechanism, "`sasl.mechanism` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER; GSSAPI is refused)", false},
	PropSASLJAASConfig: {SideBoth, nonEmpty,
		"`sasl.username` and `sasl.password`, from `PlainLoginModule` or `ScramLoginModule` (`tokenauth=true`: a delegation token); never logged", true},
	PropTrustStoreType:         {SideBoth, enumFold("PEM", "PKCS12", "JKS"), "`tls_truststore.type` (default JKS, as in Kafka)", false},
	PropTrustStoreLocation:     {SideBoth, nonEmpty, "`tls.root_cas_file` (PEM) or `tls_truststore.file`", false},
	PropTrustStoreCertificates: {SideBoth, nonEmpty, "`tls.root_cas` (PEM text)", false},
	PropTrustStorePassword:     {SideBoth, anyString, "`tls_truststore.password` (PKCS12, JKS)", true},
	PropKeyStoreType:           {SideBoth, enumFold("PEM", "PKCS12", "JKS"), "`tls_keystore.type` (default JKS, as in Kafka)", false},
	PropKeyStoreLocation:       {SideBoth, nonEmpty, "`tls_keystore.file`", false},
	PropKeyStoreCertChain:      {SideBoth, nonEmpty, "`tls.client_certs[0].cert` (PEM text)", false},
	PropKeyStoreKey:            {SideBoth, nonEmpty, "`tls.client_certs[0].key` (PEM text); never logged", true},
	PropKeyStorePassword:       {SideBoth, anyString, "`tls_keystore.password` (PKCS12, JKS)", true},
	PropKeyPassword:            {SideBoth, anyString, "`tls_keystore.key_password` (an encrypted PEM key, a JKS key entry)", true},
	PropEndpointIdentification: {SideBoth, enumFold("https", ""), "`tls_verify_hostname` (`https`: true, the default; empty: false)", false},
	PropClientID:               {SideBoth, nonEmpty, "`client_id`", false},
	PropRequestTimeoutMs:       {SideBoth, positiveInt, "`request_timeout_overhead` (milliseconds)", false},
	PropMetadataMaxAgeMs:       {SideBoth, positiveInt, "`metadata_max_age` (milliseconds)", false},
	PropConnectionsMaxIdleMs:   {SideBoth, nonNegativeInt, "`conn_idle_timeout` (milliseconds)", false},

	PropIsolationLevel:         {SideSource, enumFold("read_committed", "read_uncommitted"), "kafka_source `isolation_level`", false},
	PropAutoOffsetReset:        {SideSource, enumFold("earliest", "latest", "none"), "kafka_source `committed_fallback` (none: `error`)", false},
	PropClientRack:             {SideSource, nonEmpty, "kafka_source `rack_id` (fetch from the closest replica, KIP-392)", false},
	PropFetchMinBytes:          {SideSource, positiveInt32, "kafka_source `fetch_min_bytes`", false},
	PropFetchMaxWaitMs:         {SideSource, positiveInt, "kafka_source `fetch_max_wait` (milliseconds)", false},
	PropMaxPartitionFetchBytes: {SideSource, positiveInt32, "kafka_source `fetch_max_partition_bytes`", false},
	PropFetchMaxBytes:          {SideSource, positiveInt32, "kafka_source `fetch_max_bytes`", false},
	PropSessionTimeoutMs:       {SideSource, positiveInt, "kafka_source `group_session_timeout` (milliseconds; `assignment: group`)", false},
	PropHeartbeatIntervalMs:    {SideSource, positiveInt, "kafka_source `group_heartbeat_interval` (milliseconds; `assignment: group`)", false},
	PropGroupInstanceID:        {SideSource, nonEmpty, "kafka_source `group_instance_id` (static membership; `assignment: group`)", false},
	PropMaxPollRecords:         {SideSource, positiveInt, "kafka_source `batch_size`", false},
	PropGroupProtocol:          {SideSource, enumFold("classic", "consumer"), "kafka_source `group_protocol` (`assignment: group`)", false},

	PropTransactionTimeoutMs: {SideSink, positiveInt, "kafka_sink `transaction_timeout` (milliseconds)", false},
	PropCompressionType:      {SideSink, enumFold("none", "gzip", "snappy", "lz4", "zstd"), "kafka_sink `compression`", false},
	PropAcks: {SideSink, enumFold("all", "-1", "0", "1"),
		"kafka_sink `acks`; must be `all` with at-least-once and exactly-once (idempotence needs it)", false},
	PropEnableIdempotence: {SideSink, boolean,
		"kafka_sink `delivery_guarantee`: true is at-least-once or exactly-once, false is none; a contradiction is refused", false},
	PropLingerMs:          {SideSink, nonNegativeInt, "kafka_sink `batching.period` (milliseconds; refused with exactly-once, whose transactions commit every `commit_interval`)", false},
	PropBatchSize:         {SideSink, positiveInt, "kafka_sink `batching.byte_size` (bytes of one write; refused with exactly-once)", false},
	PropMaxRequestSize:    {SideSink, positiveInt, "kafka_sink `max_message_bytes`", false},
	PropDeliveryTimeoutMs: {SideSink, positiveInt, "kafka_sink `timeout` (milliseconds)", false},
	PropAllowAutoCreate: {SideSink, boolean, "kafka_sink `allow_auto_topic_creation` (the Java client reads it only in the consumer, " +
		"where kafka_source never creates topics)", false},
}

// refusedProperties are Kafka client properties connectd refuses, with the
// reason. A prefix entry ends with a dot.
var refusedProperties = map[string]string{
	"key.serializer":                           "a Java class; connectd encodes keys with 'key.format'",
	"value.serializer":                         "a Java class; connectd encodes values with 'format' / 'value.format'",
	"key.deserializer":                         "a Java class; connectd decodes keys with 'key.format'",
	"value.deserializer":                       "a Java class; connectd decodes values with 'format' / 'value.format'",
	"interceptor.classes":                      "Java classes, which connectd cannot load; use Benthos processors on the messages instead",
	"partitioner.class":                        "a Java class, which connectd cannot load; use option 'sink.partitioner' (or kafka_sink field partitioner, which also takes a CEL partition_expression)",
	"partitioner.ignore.keys":                  "connectd partitions by key as the Java client's default partitioner; use option 'sink.partitioner' (or kafka_sink field partitioner) for another rule",
	"partitioner.adaptive.partitioning.enable": "connectd partitions by key as the Java client's default partitioner; use option 'sink.partitioner' (or kafka_sink field partitioner) for another rule",
	"partition.assignment.strategy":            "Java classes; connectd's group mode assigns with cooperative-sticky (kafka_source field group_protocol)",
	"metric.reporters":                         "Java classes; connectd exports Benthos metrics (the metrics section of the config)",
	"sasl.login.class":                         "a Java class; connectd logs in with PLAIN, SCRAM or an OAUTHBEARER token (field sasl)",
	"sasl.login.callback.handler.class":        "a Java class; give an OAUTHBEARER token in field sasl.token",
	"sasl.client.callback.handler.class":       "a Java class; give an OAUTHBEARER token in field sasl.token",
	"sasl.kerberos.":                           "Kerberos (GSSAPI) is not supported by connectd",
	"sasl.oauthbearer.":                        "connectd does not fetch OAUTHBEARER tokens itself; give the token in field sasl.token",
	"sasl.login.":                              "connectd does not run Java login modules; it logs in with PLAIN, SCRAM or an OAUTHBEARER token (field sasl)",
	"ssl.engine.factory.class":                 "a Java class; connectd uses Go's crypto/tls",
	"ssl.keymanager.algorithm":                 "a Java security provider setting; connectd uses Go's crypto/tls",
	"ssl.trustmanager.algorithm":               "a Java security provider setting; connectd uses Go's crypto/tls",
	"ssl.provider":                             "a Java security provider setting; connectd uses Go's crypto/tls",
	"ssl.secure.random.implementation":         "a Java security provider setting; connectd uses Go's crypto/tls",
	"security.providers":                       "Java security providers; connectd uses Go's crypto/tls",
	"ssl.cipher.suites":                        "Go's crypto/tls chooses among its secure cipher suites itself",
	"ssl.protocol":                             "Go's crypto/tls negotiates TLS 1.2 or 1.3 itself",
	"ssl.enabled.protocols":                    "Go's crypto/tls negotiates TLS 1.2 or 1.3 itself",
	"enable.auto.commit":                       "connectd commits offsets itself, only up to what the output acknowledged (kafka_source field commit_period), as Flink commits on checkpoints",
	"auto.commit.interval.ms":                  "connectd commits offsets itself, only up to what the output acknowledged (kafka_source field commit_period), as Flink commits on checkpoints",
	"transactional.id":                         "set option 'sink.transactional-id-prefix' (and kafka_sink field transactional_id_suffix)",
	"retries":                                  "kafka_sink retries a record until it is written or the run stops, in order (field timeout bounds each attempt)",
	"max.in.flight.requests.per.connection":    "kafka_sink keeps per-partition order itself (field max_in_flight); the producer pipelines up to 5 requests, as the Java client with idempotence",
}

// propertyRefusal returns the reason a property is refused, if it is.
func propertyRefusal(name string) (string, bool) {
	if r, ok := refusedProperties[name]; ok {
		return r, true
	}
	for k, r := range refusedProperties {
		if strings.HasSuffix(k, ".") && strings.HasPrefix(name, k) {
			return r, true
		}
	}
	return "", false
}

// checkProperty validates option k, a `properties.*` option; ok is false
// when k is not one.
func checkProperty(k, v string) (err error, ok bool) {
	name, ok := strings.CutPrefix(k, PropertyPrefix)
	if !ok {
		return nil, false
	}
	if p, known := clientProperties[name]; known {
		if err := p.check(v); err != nil {
			return fmt.Errorf("option '%s' = '%s': %w", k, DisplayOptionValue(k, v), err), true
		}
		return nil, true
	}
	if reason, refused := propertyRefusal(name); refused {
		return fmt.Errorf("option '%s' is not supported by connectd: %s", k, reason), true
	}
	return fmt.Errorf("option '%s' is not a Kafka client property connectd knows, and connectd never ignores one "+
		"(docs/kafka-properties.md lists the properties it applies and those it refuses)", k), true
}

// DisplayOptionValue returns v for messages, or a mask when option k holds
// a secret (a password, a private key, a JAAS configuration).
func DisplayOptionValue(k, v string) string {
	if name, ok := strings.CutPrefix(k, PropertyPrefix); ok && clientProperties[name].secret {
		return "(secret)"
	}
	return v
}

// Properties returns the table's Kafka client properties (its
// `properties.*` options) by name without the prefix.
func (t *Table) Properties() map[string]string {
	out := map[string]string{}
	for k, v := range t.Options {
		if name, ok := strings.CutPrefix(k, PropertyPrefix); ok {
			out[name] = v
		}
	}
	return out
}

// ClientPropertyNames returns the names of the client properties side
// applies, sorted.
func ClientPropertyNames(side PropertySide) []string {
	var out []string
	for k, p := range clientProperties {
		if p.side == side {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func enumFold(values ...string) check {
	return func(v string) error {
		for _, x := range values {
			if strings.EqualFold(strings.TrimSpace(v), x) {
				return nil
			}
		}
		quoted := make([]string, len(values))
		for i, x := range values {
			quoted[i] = "'" + x + "'"
		}
		return fmt.Errorf("want one of %s", strings.Join(quoted, ", "))
	}
}

func saslMechanism(v string) error {
	if strings.EqualFold(strings.TrimSpace(v), "GSSAPI") {
		return fmt.Errorf("GSSAPI (Kerberos) is not supported by connectd (want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER)")
	}
	return enumFold("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")(v)
}

func positiveInt(v string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("want a positive integer")
	}
	return nil
}

func positiveInt32(v string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || n <= 0 {
		return fmt.Errorf("want a positive integer up to %d", int32(^uint32(0)>>1))
	}
	return nil
}

func nonNegativeInt(v string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("want an integer >= 0")
	}
	return nil
}

// PropertiesMarkdown returns docs/kafka-properties.md: every Kafka client
// property connectd applies, with the component and field it sets, and
// every one it refuses, with the reason. The schema test keeps the file
// equal to it (go test ./schema -run TestPropertiesDoc -update rewrites it).
func PropertiesMarkdown() string {
	var b strings.Builder
	b.WriteString(`# Kafka client properties of a Flink table

<!-- Generated from schema/properties.go by ` + "`go test ./schema -run TestPropertiesDoc -update`" + `; do not edit. -->

A Flink Kafka table hands its ` + "`properties.*`" + ` options to the Kafka clients. connectd
applies each property below to franz-go with the meaning the Java client gives it, through
the kafka_source or kafka_sink field that has the same meaning, so the same setting can be
written either way. A property that contradicts a written YAML field is an error naming
both; one the security protocol leaves unused (an ` + "`ssl.*`" + ` option without ` + "`SSL`" + ` or
` + "`SASL_SSL`" + `, a ` + "`sasl.*`" + ` option without ` + "`SASL_PLAINTEXT`" + ` or ` + "`SASL_SSL`" + `) is an error, where the
Java client would ignore it. A property of the other component (a producer property on a
table that kafka_source reads) is accepted and unused, as the Java clients accept it. Any
other property is refused by name: connectd never ignores one. Secrets (passwords, the JAAS
configuration, private keys) never appear in messages or logs.

## Applied

| property | component | connectd |
|---|---|---|
`)
	for _, name := range slices.Sorted(maps.Keys(clientProperties)) {
		p := clientProperties[name]
		fmt.Fprintf(&b, "| `%s%s` | %s | %s |\n", PropertyPrefix, name, p.side, p.maps)
	}
	b.WriteString(`
## Refused

A name ending in ` + "`.`" + ` stands for every property under it.

| property | why |
|---|---|
`)
	for _, name := range slices.Sorted(maps.Keys(refusedProperties)) {
		fmt.Fprintf(&b, "| `%s%s` | %s |\n", PropertyPrefix, name, strings.ReplaceAll(refusedProperties[name], "|", "\\|"))
	}
	return b.String()
}
