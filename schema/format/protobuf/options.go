package protobuf

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/connectd/connectd/schema"
)

// Options are the protobuf format options without the `protobuf.` prefix.
type Options struct {
	// DescriptorFile is the schema: a .proto file (compiled here, with its
	// imports resolved beside it and Google's well-known types built in) or
	// a binary FileDescriptorSet (protoc --descriptor_set_out
	// --include_imports). Option `protobuf.descriptor-file`, required
	// (connectd's; Flink names a compiled Java class instead).
	DescriptorFile string
	// MessageName is the full name of the record's message, e.g.
	// shop.v1.Order. Option `protobuf.message-name`, required.
	MessageName string
	// IgnoreParseErrors skips records that do not parse (Flink's
	// `protobuf.ignore-parse-errors`, default false).
	IgnoreParseErrors bool
	// ReadDefaultValues reads a field with presence that a record does not
	// set as its default value instead of NULL (Flink's
	// `protobuf.read-default-values`, default false).
	ReadDefaultValues bool
	// NullStringLiteral is written for a NULL element of an array or map
	// of strings (Flink's `protobuf.write-null-string-literal`, default "").
	NullStringLiteral string
}

// ParseOptions reads Flink option values (keys without the `protobuf.`
// prefix).
func ParseOptions(opts map[string]string) (Options, error) {
	if err := schema.ValidateFormatOptions(schema.FormatProtobuf, opts); err != nil {
		return Options{}, err
	}
	o := Options{
		DescriptorFile:    opts["descriptor-file"],
		MessageName:       opts["message-name"],
		NullStringLiteral: opts["write-null-string-literal"],
	}
	var errs []error
	if o.DescriptorFile == "" {
		errs = append(errs, errors.New("format protobuf: option 'protobuf.descriptor-file' is required (a .proto file or a descriptor set)"))
	}
	if o.MessageName == "" {
		errs = append(errs, errors.New("format protobuf: option 'protobuf.message-name' is required (the message's full name, e.g. shop.v1.Order)"))
	}
	for key, dst := range map[string]*bool{"ignore-parse-errors": &o.IgnoreParseErrors, "read-default-values": &o.ReadDefaultValues} {
		if v, ok := opts[key]; ok {
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("format protobuf: option 'protobuf.%s' = '%s': %w", key, v, err))
			}
			*dst = b
		}
	}
	return o, errors.Join(errs...)
}
