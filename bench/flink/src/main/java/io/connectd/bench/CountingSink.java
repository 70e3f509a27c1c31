package io.connectd.bench;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * The read job's sink: counts and discards every record, and marks the job's last record when
 * its input ends (the bounded KafkaSource reached the end offsets it read at start).
 */
final class CountingSink implements Sink<byte[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public SinkWriter<byte[]> createWriter(WriterInitContext context) {
        return new Writer();
    }

    private static final class Writer implements SinkWriter<byte[]> {
        @Override
        public void write(byte[] element, Context context) {
            Timing.sunk.increment();
        }

        @Override
        public void flush(boolean endOfInput) {
            if (endOfInput) {
                Timing.markEndOfInput();
            }
        }

        @Override
        public void close() {}
    }
}
