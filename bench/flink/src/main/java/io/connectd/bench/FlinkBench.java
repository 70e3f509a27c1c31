package io.connectd.bench;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Flink contender of connectd's bench (bench/flink.go): Apache Flink's own KafkaSource and
 * KafkaSink in a local MiniCluster, the DataStream API, the job shapes of connectd's bench
 * scenarios.
 *
 * <ul>
 *   <li>{@code --job read}: KafkaSource (earliest, bounded at the latest offsets, read_committed)
 *       into a sink that counts and discards.
 *   <li>{@code --job copy --guarantee at-least-once|exactly-once}: KafkaSource into KafkaSink
 *       writing the values to {@code --out}, checkpointing every {@code --checkpoint-ms}; with
 *       exactly-once the sink's transactions commit on checkpoints.
 * </ul>
 *
 * <p>The job ends by itself (bounded source); with checkpointing on, Flink takes a final
 * checkpoint after the tasks finish, which commits the last transaction. It prints one JSON
 * line on stdout: counts, and the wall clock and process CPU at the first record, at the last
 * record (read job) and when the job finished. No restart strategy: any failure fails the run.
 */
public final class FlinkBench {
    private FlinkBench() {}

    /**
     * Runs the job and exits: 0 after printing the result, 1 on any failure. Exiting explicitly
     * keeps a failed MiniCluster (an OutOfMemoryError while starting, say) from leaving
     * non-daemon threads that would keep the JVM, and the bench, waiting.
     */
    public static void main(String[] argv) {
        try {
            run(argv);
        } catch (Throwable t) {
            t.printStackTrace();
            System.err.flush();
            Runtime.getRuntime().halt(1);
        }
        System.exit(0);
    }

    private static void run(String[] argv) throws Exception {
        long mainMs = System.currentTimeMillis();
        Map<String, String> args = parse(argv);
        String job = need(args, "job");
        String brokers = need(args, "brokers");
        int parallelism = Integer.parseInt(args.getOrDefault("parallelism", "1"));

        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "disable");
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);

        KafkaSource<byte[]> source =
                KafkaSource.<byte[]>builder()
                        .setBootstrapServers(brokers)
                        .setTopics(need(args, "in"))
                        .setGroupId(need(args, "group"))
                        .setStartingOffsets(OffsetsInitializer.earliest())
                        .setBounded(OffsetsInitializer.latest())
                        .setProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")
                        .setDeserializer(new TimedDeserializer())
                        .build();
        DataStream<byte[]> records =
                env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka-source");

        switch (job) {
            case "read":
                records.sinkTo(new CountingSink()).name("count-and-discard");
                break;
            case "copy":
                String guarantee = need(args, "guarantee");
                long checkpointMs = Long.parseLong(need(args, "checkpoint-ms"));
                var sink =
                        KafkaSink.<byte[]>builder()
                                .setBootstrapServers(brokers)
                                .setRecordSerializer(
                                        KafkaRecordSerializationSchema.<byte[]>builder()
                                                .setTopic(need(args, "out"))
                                                .setKafkaValueSerializer(ByteArraySerializer.class)
                                                .build());
                switch (guarantee) {
                    case "at-least-once":
                        env.enableCheckpointing(checkpointMs, CheckpointingMode.AT_LEAST_ONCE);
                        sink.setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE);
                        break;
                    case "exactly-once":
                        env.enableCheckpointing(checkpointMs, CheckpointingMode.EXACTLY_ONCE);
                        sink.setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                                .setTransactionalIdPrefix(need(args, "txn-prefix"))
                                // The sink's default (1 h) is above the broker's
                                // transaction.max.timeout.ms (15 min); connectd's default is 1m.
                                .setProperty(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000");
                        break;
                    default:
                        throw new IllegalArgumentException(
                                "--guarantee: want at-least-once or exactly-once, got " + guarantee);
                }
                records.sinkTo(sink.build()).name("kafka-sink");
                break;
            default:
                throw new IllegalArgumentException("--job: want read or copy, got " + job);
        }

        JobExecutionResult result = env.execute("connectd-bench-" + job);
        long endMs = System.currentTimeMillis();
        long endCpuNs = Timing.cpuNs();
        System.out.printf(
                "{\"records_read\":%d,\"records_sunk\":%d,\"jvm_start_ms\":%d,\"main_ms\":%d,"
                        + "\"first_record_ms\":%d,\"last_record_ms\":%d,\"end_ms\":%d,"
                        + "\"first_record_cpu_s\":%.3f,\"last_record_cpu_s\":%.3f,\"end_cpu_s\":%.3f,"
                        + "\"net_runtime_ms\":%d}%n",
                Timing.read.sum(),
                Timing.sunk.sum(),
                ManagementFactory.getRuntimeMXBean().getStartTime(),
                mainMs,
                Timing.firstRecordMs.get(),
                Timing.lastRecordMs(),
                endMs,
                Timing.firstRecordCpuNs.get() / 1e9,
                Timing.lastRecordCpuNs() / 1e9,
                endCpuNs / 1e9,
                result.getNetRuntime());
        System.out.flush();
    }

    private static Map<String, String> parse(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i < argv.length; i++) {
            if (!argv[i].startsWith("--") || i + 1 == argv.length) {
                throw new IllegalArgumentException("want --name value pairs, got " + argv[i]);
            }
            args.put(argv[i].substring(2), argv[++i]);
        }
        return args;
    }

    private static String need(Map<String, String> args, String name) {
        String v = args.get(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return v;
    }
}
