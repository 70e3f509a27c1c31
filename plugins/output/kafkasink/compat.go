package kafkasink

import (
	"fmt"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/speclint"
)

// Configs brought from Redpanda Connect (its `kafka_franz`, `kafka` and
// `redpanda` outputs) fail lint and run with a hint that says what connectd
// calls the same thing: docs/migrating-from-redpanda-connect.md.

// redpandaOutputs are Redpanda Connect's Kafka outputs.
var redpandaOutputs = []string{"kafka", "kafka_franz", "redpanda", "redpanda_common"}

// redpandaPartitioners are Redpanda Connect's partitioner names with the
// hint for each.
var redpandaPartitioners = map[string]string{
	"murmur2_hash": fmt.Sprintf("did you mean %s? Redpanda Connect's murmur2_hash is connectd's %s (murmur2 of the key, as the Java client)",
		PartitionerDefault, PartitionerDefault),
	"least_backup": fmt.Sprintf("connectd has no least_backup; %s spreads records evenly", PartitionerRoundRobin),
}

// partitionerHint is the hint for an unknown partitioner name, or "".
func partitionerHint(name string) string {
	if h := redpandaPartitioners[name]; h != "" {
		return "; " + h
	}
	return ""
}

func init() {
	h := kafkaconn.CompatHints()
	h["idempotent_write"] = fmt.Sprintf("writes are idempotent at `%s: %s` (the default); `%s: none` turns idempotence off",
		FieldDeliveryGuarantee, DeliveryAtLeastOnce, FieldDeliveryGuarantee)
	h["timestamp"] = fmt.Sprintf("write `%s`, an interpolation giving Unix milliseconds", FieldTimestampMs)
	speclint.RegisterFieldHints("kafka_sink", h)
	for _, n := range redpandaOutputs {
		speclint.RegisterNameHint(speclint.Output, n,
			"did you mean kafka_sink? (connectd's Kafka output; Redpanda Connect's fields map as docs/migrating-from-redpanda-connect.md shows)")
	}
}
