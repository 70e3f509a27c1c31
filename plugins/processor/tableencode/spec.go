// Package tableencode is the `table_encode` processor: it turns a structured
// message (a row) into record bytes with a table's format (Flink's
// SerializationSchema driven by a CREATE TABLE).
package tableencode

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/metricdoc"
	"github.com/connectd/connectd/internal/speclint"
	"github.com/connectd/connectd/internal/table"
)

const component = "table_encode"

// Spec returns the config spec of the table_encode processor.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Parsing").
		Summary("Encodes each structured message, a row of a table defined in Flink SQL DDL or YAML, with Flink's json, csv, avro, avro-confluent, raw or protobuf format.").
		Description(`
The message must be an object: a row keyed by column name, such as `+"`table_decode`"+` produces. Its physical
columns are written in the format; keys that are not physical columns are ignored, and absent columns are null
(a NOT NULL column must be present). Values may be the typed values `+"`table_decode`"+` produces or their usual
JSON forms: numbers, decimal strings, timestamps as RFC 3339 or `+"`2006-01-02 15:04:05.999`"+` text or epoch
milliseconds, bytes as base64. Metadata columns are not written: they belong to the connector.

### Bad records

`+"`on_error`"+`: `+"`fail`"+` (the default) ends the run as `+"`table_decode`"+`'s does: the message is dropped, nothing
at or after it is committed, and connectd exits with code 1 and an error naming topic, partition and offset when the
message carries kafka_* metadata, else its index. `+"`skip`"+` drops the message; `+"`dead_letter`"+` keeps the message
unchanged and flags it with the error for `+"`catch`"+`, `+"`switch`"+` (`+"`errored()`"+`) or `+"`reject_errored`"+` to
route: these two keep the run going.

### Metrics

- `+"`table_encode_failed`"+`, `+"`table_encode_skipped`"+`, `+"`table_encode_dead_letter`"+` (counters): bad records by policy.
`).
		Fields(table.ProcessorFields(component, "encode")...).
		Example("Rows to CSV",
			"Write generated rows as CSV lines with a tab delimiter, by an inline YAML table.",
			`
pipeline:
  processors:
    - table_encode:
        table:
          name: readings
          columns:
            - { name: sensor, type: STRING NOT NULL }
            - { name: value, type: DOUBLE }
            - { name: at, type: TIMESTAMP_LTZ(3) }
          options: { format: csv, csv.field-delimiter: '\t' }
`)
}

func init() {
	metricdoc.Register(table.BadMetrics(component)...)
	spec := Spec()
	speclint.Register(speclint.Processor, component, spec, func(conf *service.ParsedConfig) error {
		_, err := table.ProcessorFromParsed(conf)
		return err
	})
	service.MustRegisterProcessor(component, spec,
		func(conf *service.ParsedConfig, mgr *service.Resources) (service.Processor, error) {
			c, err := table.ProcessorFromParsed(conf)
			if err != nil {
				return nil, err
			}
			return newProcessor(c, mgr), nil
		})
}
