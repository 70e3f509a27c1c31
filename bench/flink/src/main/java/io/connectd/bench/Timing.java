package io.connectd.bench;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The moments and counts the bench reports, shared by the job's operators and {@link
 * FlinkBench#main}.
 *
 * <p>The local MiniCluster runs every task in this JVM, and the job's classes come from the
 * application class path (the job graph carries no jars), so these statics are the same for the
 * source readers, the sink writers and main.
 */
final class Timing {
    private Timing() {}

    private static final OperatingSystemMXBean OS =
            (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /** Wall clock (epoch ms) and process CPU (ns) when the first record left a source reader. */
    static final AtomicLong firstRecordMs = new AtomicLong();

    static final AtomicLong firstRecordCpuNs = new AtomicLong();

    /** Wall clock and process CPU when the last sink writer reached its end of input. */
    private static long lastRecordMs;

    private static long lastRecordCpuNs;

    /** Records the source readers emitted, and records the counting sink counted. */
    static final LongAdder read = new LongAdder();

    static final LongAdder sunk = new LongAdder();

    /** Process CPU time, user and system, of all threads of this JVM, in nanoseconds. */
    static long cpuNs() {
        return OS.getProcessCpuTime();
    }

    /** Marks the first record once, whichever reader gets there first. */
    static void markFirstRecord() {
        long now = System.currentTimeMillis();
        if (firstRecordMs.compareAndSet(0, now)) {
            firstRecordCpuNs.set(cpuNs());
        }
    }

    /**
     * Marks a sink writer's end of input: after its last record. The last writer to get there
     * marks the job's last record.
     */
    static synchronized void markEndOfInput() {
        lastRecordMs = System.currentTimeMillis();
        lastRecordCpuNs = cpuNs();
    }

    static synchronized long lastRecordMs() {
        return lastRecordMs;
    }

    static synchronized long lastRecordCpuNs() {
        return lastRecordCpuNs;
    }
}
