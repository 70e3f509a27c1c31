// Package avroconfluent is Flink's `avro-confluent` format: Avro binary
// records in Confluent's wire format, with their schemas in a Confluent
// Schema Registry.
//
// A record is the magic byte 0, the writer schema's id as 4 bytes big
// endian, then the Avro binary record. Decode fetches the writer schema by
// id (cached) and reads the record with it into the table's typed row:
// fields are matched by name, a field the writer lacks is NULL, and values
// follow Avro's resolution rules (int to long, float or double, string and
// bytes, ...); anything else is an error that names the field, both types
// and the schema id. Encode writes the schema that package avro derives from
// the table (as Flink's AvroSchemaConverter), registered under the subject
// (TopicNameStrategy `<topic>-value` by default, or the `subject` option)
// when `auto.register.schemas` is true (default), or looked up there when it
// is false.
package avroconfluent

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/linkedin/goavro/v2"

	"github.com/connectd/connectd/schema"
	"github.com/connectd/connectd/schema/compat"
	"github.com/connectd/connectd/schema/format/avro"
	"github.com/connectd/connectd/schema/registry"
)

// MagicByte starts every record of the wire format.
const MagicByte = 0

// HeaderSize is the size of the magic byte and the schema id.
const HeaderSize = 5

// Errors that Decode wraps.
var (
	// ErrMagicByte: the record does not start with MagicByte.
	ErrMagicByte = errors.New("not the Confluent wire format: the first byte is not the magic byte 0")
	// ErrShort: the record is shorter than the header.
	ErrShort = errors.New("not the Confluent wire format: shorter than the 5-byte header")
	// ErrNoSubject: Encode has no subject (no `subject` option and no topic).
	ErrNoSubject = errors.New("no subject: set the format option 'subject' or give the record's topic (kafka_topic metadata)")
)

// Record is what the format uses besides the bytes or the row.
type Record struct {
	// Topic names the default subject, `<topic>-value` or `<topic>-key`.
	Topic string
}

// Format decodes and encodes one table's rows in the Confluent wire format.
type Format struct {
	row     *schema.Type
	opts    Options
	client  *registry.Client
	encoder *avro.Format
	schema  string // the table's derived schema, as registered

	mu struct {
		sync.Mutex
		writers map[int]*writer // by schema id
		ids     map[string]int  // subject -> id of the table's schema
	}
}

type writer struct {
	codec *goavro.Codec
	tree  *node
}

// New returns the avro-confluent format for rows of type row (kind ROW). It
// does not contact the registry; the first Decode or Encode does.
func New(row *schema.Type, opts Options) (*Format, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	enc, err := avro.New(row, avro.Options{})
	if err != nil {
		return nil, fmt.Errorf("format avro-confluent: %w", err)
	}
	cfg := registry.Config{URL: opts.URL}
	if opts.CredentialsSource != CredentialsURL {
		cfg.UserInfo = opts.UserInfo
	}
	client, err := registry.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("format avro-confluent: option 'url': %w", err)
	}
	f := &Format{row: row, opts: opts, client: client, encoder: enc, schema: enc.SchemaJSON()}
	f.mu.writers = map[int]*writer{}
	f.mu.ids = map[string]int{}
	return f, nil
}

// SchemaJSON returns the schema that Encode registers.
func (f *Format) SchemaJSON() string { return f.schema }

// Registry returns the format's schema registry client.
func (f *Format) Registry() *registry.Client { return f.client }

// Decode reads one record with no topic known.
func (f *Format) Decode(data []byte) (map[string]any, error) {
	return f.DecodeRecord(context.Background(), data, Record{})
}

// Encode writes one row; the subject must come from the `subject` option.
func (f *Format) Encode(row map[string]any) ([]byte, error) {
	return f.EncodeRecord(context.Background(), row, Record{})
}

// DecodeRecord reads one record of the wire format into a row.
func (f *Format) DecodeRecord(ctx context.Context, data []byte, _ Record) (map[string]any, error) {
	if len(data) < HeaderSize {
		if len(data) > 0 && data[0] != MagicByte {
			return nil, fmt.Errorf("format avro-confluent: %w (got 0x%02x)", ErrMagicByte, data[0])
		}
		return nil, fmt.Errorf("format avro-confluent: %w (%d bytes)", ErrShort, len(data))
	}
	if data[0] != MagicByte {
		return nil, fmt.Errorf("format avro-confluent: %w (got 0x%02x)", ErrMagicByte, data[0])
	}
	id := int(int32(binary.BigEndian.Uint32(data[1:HeaderSize])))
	w, err := f.writer(ctx, id)
	if err != nil {
		return nil, err
	}
	native, rest, err := w.codec.NativeFromBinary(data[HeaderSize:])
	if err != nil {
		return nil, fmt.Errorf("format avro-confluent: schema id %d: %w", id, err)
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("format avro-confluent: schema id %d: %d bytes after the record", id, len(rest))
	}
	m, ok := native.(map[string]any)
	if !ok || w.tree.typ != "record" {
		return nil, fmt.Errorf("format avro-confluent: schema id %d: the writer schema is %s, not a record", id, w.tree.describe())
	}
	row, err := recordToRow(f.row, w.tree, m, "")
	if err != nil {
		return nil, fmt.Errorf("format avro-confluent: schema id %d: %w", id, err)
	}
	return row, nil
}

// writer returns the codec of the writer schema with the id, fetched once.
func (f *Format) writer(ctx context.Context, id int) (*writer, error) {
	f.mu.Lock()
	w, ok := f.mu.writers[id]
	f.mu.Unlock()
	if ok {
		return w, nil
	}
	s, err := f.client.SchemaByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("format avro-confluent: schema id %d: %w", id, err)
	}
	if s.Type != "" && s.Type != "AVRO" {
		return nil, fmt.Errorf("format avro-confluent: schema id %d at %s is a %s schema, not Avro", id, f.client.URL(), s.Type)
	}
	text := codecSchema(s.Schema)
	codec, err := goavro.NewCodec(text)
	if err != nil {
		return nil, fmt.Errorf("format avro-confluent: schema id %d at %s: %w", id, f.client.URL(), err)
	}
	tree, err := parseWriter(text)
	if err != nil {
		return nil, fmt.Errorf("format avro-confluent: schema id %d at %s: %w", id, f.client.URL(), err)
	}
	w = &writer{codec: codec, tree: tree}
	f.mu.Lock()
	f.mu.writers[id] = w
	f.mu.Unlock()
	return w, nil
}

// Subject returns the subject of a record: the `subject` option, else
// `<topic>-value` (or `-key`).
func (f *Format) Subject(rec Record) (string, error) {
	if f.opts.Subject != "" {
		return f.opts.Subject, nil
	}
	if rec.Topic == "" {
		return "", fmt.Errorf("format avro-confluent: %w", ErrNoSubject)
	}
	return rec.Topic + f.opts.Part.suffix(), nil
}

// EncodeRecord writes one row in the wire format, registering (or looking
// up) the table's schema under the record's subject first.
func (f *Format) EncodeRecord(ctx context.Context, row map[string]any, rec Record) ([]byte, error) {
	subject, err := f.Subject(rec)
	if err != nil {
		return nil, err
	}
	id, err := f.schemaID(ctx, subject)
	if err != nil {
		return nil, err
	}
	out := make([]byte, HeaderSize, 256)
	out[0] = MagicByte
	binary.BigEndian.PutUint32(out[1:], uint32(id))
	out, err = f.encoder.AppendEncode(out, row)
	if err != nil {
		return nil, fmt.Errorf("format avro-confluent: subject %s, schema id %d: %w", subject, id, err)
	}
	return out, nil
}

func (f *Format) schemaID(ctx context.Context, subject string) (int, error) {
	f.mu.Lock()
	id, ok := f.mu.ids[subject]
	f.mu.Unlock()
	if ok {
		return id, nil
	}
	var err error
	if f.opts.AutoRegister {
		if err := f.checkCompatible(ctx, subject); err != nil {
			return 0, err
		}
		id, err = f.client.Register(ctx, subject, f.schema)
		if errors.Is(err, registry.ErrIncompatible) {
			// The registry refused it (409) although the check passed (a
			// version registered meanwhile): say which field.
			return 0, f.incompatible(ctx, subject, registry.Verdict{}, err)
		}
	} else {
		id, err = f.client.Lookup(ctx, subject, f.schema)
	}
	if err != nil {
		verb := "registering"
		if !f.opts.AutoRegister {
			verb = "looking up (auto.register.schemas is false)"
		}
		return 0, fmt.Errorf("format avro-confluent: subject %s: %s the table's schema: %w", subject, verb, err)
	}
	f.mu.Lock()
	f.mu.ids[subject] = id
	f.mu.Unlock()
	return id, nil
}

// checkCompatible asks the registry, before the table's schema is
// registered under subject, whether the subject's compatibility level
// allows it (Flink registers without asking; the registry would refuse an
// incompatible schema with HTTP 409 and no field named). An incompatible
// schema is an error that wraps registry.ErrIncompatible and names the
// field that breaks it.
func (f *Format) checkCompatible(ctx context.Context, subject string) error {
	v, err := f.client.CheckCompatibility(ctx, subject, f.schema)
	if errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrUnauthorized) {
		// A registry without the config or compatibility endpoints, or
		// credentials that may register but not read the config (some
		// hosted registries): registering still refuses an incompatible
		// schema (409), explained then.
		return nil
	}
	if err != nil {
		return fmt.Errorf("format avro-confluent: subject %s: checking the table's schema against the subject's compatibility level: %w", subject, err)
	}
	if v.Compatible {
		return nil
	}
	return f.incompatible(ctx, subject, v, nil)
}

// incompatible is the error for a schema the registry finds incompatible:
// v says so (the check before registering), or the registry refused to
// register it (cause, HTTP 409). It gives the registry's own reasons, else
// the field that compat.Check names against the subject's versions.
func (f *Format) incompatible(ctx context.Context, subject string, v registry.Verdict, cause error) error {
	why := strings.Join(v.Messages, "; ")
	if why == "" {
		why = f.explain(ctx, subject, v.Level)
	}
	what := "the registry refused the table's schema as incompatible"
	if v.Level != "" {
		what = "the table's schema breaks the subject's " + v.Level + " compatibility level"
	}
	if cause != nil {
		why = fmt.Sprintf("%s (%v)", why, cause)
	}
	return fmt.Errorf("format avro-confluent: subject %s: registering the table's schema: %w: %s: %s; "+
		"change the table compatibly (for example add columns as NULL-able, keep types), or the subject's compatibility level in the registry",
		subject, registry.ErrIncompatible, what, why)
}

// explain checks the table's schema locally against the subject's
// versions, for a registry that gives no reasons.
func (f *Format) explain(ctx context.Context, subject, level string) string {
	l, err := compat.ParseLevel(level)
	if err != nil {
		l = compat.Backward
	}
	versions, err := f.client.Schemas(ctx, subject)
	if err != nil {
		return fmt.Sprintf("the registry gave no reason, and reading the subject's versions failed: %v", err)
	}
	if err := compat.Check(l, f.schema, versions); err != nil {
		return err.Error()
	}
	return "the registry gave no reason (a local check at " + string(l) + " finds none)"
}

// codecSchema renames a top record named as Flink names it
// (org.apache.flink.avro.generated.record) before goavro compiles it: goavro
// reads a nested `"type": "record"` as a reference to a type named `record`
// in the enclosing namespace, which that name is. Names are not in the
// binary encoding, so the bytes read the same.
func codecSchema(text string) string {
	var top map[string]any
	if json.Unmarshal([]byte(text), &top) != nil {
		return text
	}
	name, _ := top["name"].(string)
	if ns, ok := top["namespace"].(string); ok && name == "record" {
		name = ns + "." + name
	}
	if name != avro.RecordName {
		return text
	}
	top["name"] = avro.RecordName + "_top"
	b, err := json.Marshal(top)
	if err != nil {
		return text
	}
	return string(b)
}
