package io.connectd.bench;

import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Hands on each record's value as it is (the bench's records have no key), marks the first
 * record the job reads and counts the records read. Each source reader has its own instance
 * (deserialized from the job graph) and calls it from its task thread only.
 */
final class TimedDeserializer implements KafkaRecordDeserializationSchema<byte[]> {
    private static final long serialVersionUID = 1L;

    private transient boolean seen;

    @Override
    public void open(DeserializationSchema.InitializationContext context) {
        seen = false;
    }

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<byte[]> out) {
        if (!seen) {
            seen = true;
            Timing.markFirstRecord();
        }
        Timing.read.increment();
        out.collect(record.value());
    }

    @Override
    public TypeInformation<byte[]> getProducedType() {
        return PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO;
    }
}
