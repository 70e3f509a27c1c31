package avroconfluent

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/connectd/connectd/schema"
)

// Part is the part of a Kafka record that a format reads and writes; it
// picks the default subject suffix of TopicNameStrategy.
type Part int

// Parts.
const (
	PartValue Part = iota // subject <topic>-value
	PartKey               // subject <topic>-key
)

func (p Part) suffix() string {
	if p == PartKey {
		return "-key"
	}
	return "-value"
}

// CredentialsSource says where basic-auth credentials come from, as Flink's
// `avro-confluent.basic-auth.credentials-source`.
type CredentialsSource string

// Credentials sources.
const (
	// CredentialsUserInfo: `basic-auth.user-info` (`user:password`).
	CredentialsUserInfo CredentialsSource = "USER_INFO"
	// CredentialsURL: the user info of `url` (http://user:password@host).
	CredentialsURL CredentialsSource = "URL"
)

// Options are the avro-confluent format options (Flink keys without the
// `avro-confluent.` prefix).
type Options struct {
	// URL is the registry's base URL (`url`, or its older spelling
	// `schema-registry.url`, which Flink still accepts). Required.
	URL string
	// Subject is the subject to register and look schemas up under
	// (`subject`, or its older spelling `schema-registry.subject`).
	// Default: TopicNameStrategy, `<topic>-value` (or `-key`) with the
	// topic of the record (kafka_topic metadata).
	Subject string
	// CredentialsSource picks the basic-auth credentials
	// (`basic-auth.credentials-source`). Default USER_INFO when UserInfo is
	// set, else URL.
	CredentialsSource CredentialsSource
	// UserInfo is `user:password` (`basic-auth.user-info`). Default: none.
	UserInfo string
	// AutoRegister registers the table's schema on encode
	// (`auto.register.schemas`, as Confluent's serializer option). Default
	// true; false looks the schema up in the subject and fails when it is
	// not there.
	AutoRegister bool
	// Part is the record part, for the default subject. Default PartValue.
	Part Part
}

// ParseOptions reads Flink option values (keys without the prefix).
func ParseOptions(opts map[string]string) (Options, error) {
	if err := schema.ValidateFormatOptions(schema.FormatAvroConfluent, opts); err != nil {
		return Options{}, err
	}
	o := Options{
		URL:               spelled(opts, "url", "schema-registry.url"),
		Subject:           spelled(opts, "subject", "schema-registry.subject"),
		UserInfo:          opts["basic-auth.user-info"],
		CredentialsSource: CredentialsSource(opts["basic-auth.credentials-source"]),
		AutoRegister:      true,
	}
	if v, ok := opts["auto.register.schemas"]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Options{}, fmt.Errorf("format avro-confluent: option 'auto.register.schemas' = '%s': want true or false", v)
		}
		o.AutoRegister = b
	}
	return o, o.validate()
}

// spelled returns the option under its name, else under its older
// spelling (schema.ValidateFormatOptions refuses the two with different
// values).
func spelled(opts map[string]string, name, older string) string {
	if v, ok := opts[name]; ok {
		return v
	}
	return opts[older]
}

// validate checks the options across fields, collecting every problem.
func (o Options) validate() error {
	var errs []string
	if o.URL == "" {
		errs = append(errs, "option 'url' is required (the schema registry's base URL, e.g. http://localhost:8081)")
	}
	switch o.CredentialsSource {
	case "", CredentialsURL:
		if o.CredentialsSource == CredentialsURL && o.UserInfo != "" {
			errs = append(errs, "option 'basic-auth.user-info' is set but 'basic-auth.credentials-source' is URL; set USER_INFO or drop the user info")
		}
	case CredentialsUserInfo:
		if o.UserInfo == "" {
			errs = append(errs, "option 'basic-auth.credentials-source' is USER_INFO but 'basic-auth.user-info' is not set (want user:password)")
		}
	}
	if o.UserInfo != "" && !strings.Contains(o.UserInfo, ":") {
		errs = append(errs, "option 'basic-auth.user-info': want user:password")
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("format avro-confluent: %s", strings.Join(errs, "; "))
}
