package table

import (
	"strings"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/format/avroconfluent"
	"github.com/connectd/connectd/schema/registry"
)

// RegistrySchema is a schema that writing a table's rows registers in a
// schema registry: the Avro schema of its avro-confluent key or value.
type RegistrySchema struct {
	// Part is "key" or "value".
	Part string
	// Subject is the subject it is registered under; "" when the table
	// reads a topic-pattern and has no 'subject' option (the subject then
	// depends on each record's topic).
	Subject string
	// Schema is the Avro schema, as the format registers it.
	Schema string
	// Client is the format's registry client (its URL and credentials).
	Client *registry.Client
}

// confluentFormat is what the avro-confluent codecs (format's and this
// package's key codec) have.
type confluentFormat interface {
	SchemaJSON() string
	Subject(avroconfluent.Record) (string, error)
	Registry() *registry.Client
}

// RegistrySchemas returns the schemas that writing rows of the codec's
// table registers: its avro-confluent key and value, in that order; none
// for other formats. The subject is the 'subject' option, else the table's
// first topic with -key or -value.
func (c *Codec) RegistrySchemas() []RegistrySchema {
	topic := ""
	if topics := c.table.Options[schema.OptTopic]; topics != "" {
		topic = strings.TrimSpace(strings.Split(topics, ";")[0])
	}
	var out []RegistrySchema
	for _, part := range []struct {
		name  string
		codec any
	}{{"key", c.key}, {"value", c.value}} {
		f, ok := part.codec.(confluentFormat)
		if !ok {
			continue
		}
		subject, err := f.Subject(avroconfluent.Record{Topic: topic})
		if err != nil {
			subject = ""
		}
		out = append(out, RegistrySchema{Part: part.name, Subject: subject, Schema: f.SchemaJSON(), Client: f.Registry()})
	}
	return out
}
