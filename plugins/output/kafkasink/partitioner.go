package kafkasink

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Partitioner names how records are spread over a topic's partitions. Flink
// option: `sink.partitioner`.
type Partitioner string

const (
	// PartitionerDefault is Flink's `default` partitioner, which defers to
	// the Java client: a keyed record goes to
	// Utils.toPositive(Utils.murmur2(key)) % numPartitions; a record with a
	// null key sticks to a random partition until its batch is sent, then
	// moves on (KIP-480). An empty key is a key (it hashes), but the sink
	// turns an empty interpolated key into a null key.
	PartitionerDefault Partitioner = "default"
)

// kgoPartitioner returns the franz-go partitioner for p. A new value is
// returned on each call: sticky partitioners keep per-topic state.
func (p Partitioner) kgoPartitioner() (kgo.Partitioner, error) {
	switch p {
	case PartitionerDefault:
		// A nil hasher is kgo.KafkaHasher(murmur2): murmur2 with the Java
		// seed, the sign bit masked (Utils.toPositive), modulo n. Pinned
		// against kafka-clients by TestDefaultPartitionerMatchesJava.
		return kgo.StickyKeyPartitioner(nil), nil
	}
	return nil, fmt.Errorf("field %s: unknown partitioner %q (want %s)", FieldPartitioner, p, PartitionerDefault)
}
