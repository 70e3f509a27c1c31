package io.connectd.interop;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.internal.TableEnvironmentInternal;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.operations.ModifyOperation;
import org.apache.flink.table.operations.Operation;
import org.apache.flink.table.operations.QueryOperation;
import org.apache.flink.table.operations.StatementSetOperation;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * Runs the SQL statements of a file with Apache Flink's TableEnvironment in a local MiniCluster
 * (streaming mode, parallelism 1, local time zone UTC) and prints, on stdout, one JSON line per
 * event (see {@link Json} for how values are written):
 *
 * <pre>
 *   {"stmt":N,"columns":[{"name":"a","type":"DECIMAL(10, 2)"},...]}   a query's result schema
 *   {"stmt":N,"kind":"+I","row":[...]}                               one row of it, with its change kind
 *   {"stmt":N,"done":"query"|"insert"|"ddl","rows":R}                the statement finished
 *   {"stmt":N,"error":"..."}                                          the statement failed
 * </pre>
 *
 * N is the statement's index in the file, from 0. Statements are separated by ';' outside
 * quotes and comments (and inside EXECUTE STATEMENT SET BEGIN ... END, which runs its INSERTs
 * as one job). Any statement Flink's TableEnvironment accepts runs: CREATE TABLE, SET,
 * INSERT and statement sets (waited for), SELECT (collected until the job ends: bound the scans, for example with
 * 'scan.bounded.mode' = 'latest-offset'), SHOW, ... A failed statement prints its error and the
 * run goes on with the next one; the exit code is 1 if any failed (2 for a usage error).
 *
 * <p>Options (before the file): --timeout SECONDS for each statement (default 300),
 * --parallelism N (default 1), --conf key=value for any Flink configuration option.
 */
public final class FlinkSql {

    public static void main(String[] args) throws Exception {
        long timeoutSec = 300;
        Configuration conf = new Configuration();
        conf.setString("parallelism.default", "1");
        conf.setString("table.local-time-zone", "UTC");
        // A small local cluster: the tests run one statement at a time.
        conf.setString("taskmanager.numberOfTaskSlots", "2");
        conf.setString("rest.bind-address", "127.0.0.1");
        conf.setString("rest.bind-port", "0");
        String file = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--timeout" -> timeoutSec = Long.parseLong(args[++i]);
                case "--parallelism" -> conf.setString("parallelism.default", args[++i]);
                case "--conf" -> {
                    String kv = args[++i];
                    int eq = kv.indexOf('=');
                    if (eq < 1) {
                        usage("--conf wants key=value, got " + kv);
                    }
                    conf.setString(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
                }
                default -> {
                    if (file != null || args[i].startsWith("--")) {
                        usage("unknown argument " + args[i]);
                    }
                    file = args[i];
                }
            }
        }
        if (file == null) {
            usage("no SQL file");
        }
        String sql = file.equals("-")
                ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
                : Files.readString(Path.of(file), StandardCharsets.UTF_8);
        List<String> statements = Statements.split(sql);

        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        TableEnvironment env = TableEnvironment.create(
                EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
        boolean failed = false;
        // A statement that outlives --timeout (a query over an unbounded scan, a job that hangs)
        // ends the run: its collect iterator cannot be interrupted.
        ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "flink-sql-watchdog");
            t.setDaemon(true);
            return t;
        });
        for (int n = 0; n < statements.size(); n++) {
            final int stmt = n;
            final long limit = timeoutSec;
            ScheduledFuture<?> timer = watchdog.schedule(() -> {
                synchronized (out) {
                    out.println("{\"stmt\":" + stmt + ",\"error\":" + Json.quote("the statement did not end within "
                            + limit + "s (--timeout); a query must bound its scans, e.g. 'scan.bounded.mode' = 'latest-offset'") + "}");
                    out.flush();
                }
                Runtime.getRuntime().halt(1);
            }, timeoutSec, TimeUnit.SECONDS);
            try {
                run((TableEnvironmentInternal) env, n, statements.get(n), out);
            } catch (Throwable e) {
                failed = true;
                synchronized (out) {
                    out.println("{\"stmt\":" + n + ",\"error\":" + Json.quote(message(e)) + "}");
                    out.flush();
                }
            } finally {
                timer.cancel(false);
            }
        }
        out.flush();
        // The MiniCluster's threads are not all daemons: end the JVM.
        System.exit(failed ? 1 : 0);
    }

    private static void usage(String why) {
        System.err.println("flink-sql: " + why);
        System.err.println("usage: flink-sql [--timeout SECONDS] [--parallelism N] [--conf key=value]... FILE.sql|-");
        System.exit(2);
    }

    private static void run(TableEnvironmentInternal env, int n, String stmt, PrintStream out)
            throws Exception {
        List<Operation> ops = env.getParser().parse(stmt);
        if (ops.size() != 1) {
            throw new IllegalArgumentException("one statement expected, Flink parsed " + ops.size());
        }
        Operation op = ops.get(0);
        if (op instanceof ModifyOperation || op instanceof StatementSetOperation) {
            TableResult r = env.executeInternal(op);
            r.await();
            out.println("{\"stmt\":" + n + ",\"done\":\"insert\"}");
            out.flush();
            return;
        }
        TableResult r = env.executeInternal(op);
        boolean query = op instanceof QueryOperation;
        if (!query && r.getResultKind() != org.apache.flink.table.api.ResultKind.SUCCESS_WITH_CONTENT) {
            out.println("{\"stmt\":" + n + ",\"done\":\"ddl\"}");
            out.flush();
            return;
        }
        ResolvedSchema schema = r.getResolvedSchema();
        List<Column> cols = schema.getColumns();
        LogicalType[] types = new LogicalType[cols.size()];
        StringBuilder head = new StringBuilder("{\"stmt\":").append(n).append(",\"columns\":[");
        for (int i = 0; i < cols.size(); i++) {
            types[i] = cols.get(i).getDataType().getLogicalType();
            if (i > 0) {
                head.append(',');
            }
            head.append("{\"name\":").append(Json.quote(cols.get(i).getName()))
                    .append(",\"type\":").append(Json.quote(Json.typeString(types[i]))).append('}');
        }
        out.println(head.append("]}"));
        long rows = 0;
        try (CloseableIterator<Row> it = r.collect()) {
            while (it.hasNext()) {
                Row row = it.next();
                StringBuilder b = new StringBuilder("{\"stmt\":").append(n)
                        .append(",\"kind\":").append(Json.quote(row.getKind().shortString()))
                        .append(",\"row\":[");
                for (int i = 0; i < types.length; i++) {
                    if (i > 0) {
                        b.append(',');
                    }
                    Json.value(b, types[i], row.getField(i));
                }
                synchronized (out) {
                    out.println(b.append("]}"));
                }
                rows++;
            }
        }
        out.println("{\"stmt\":" + n + ",\"done\":\"" + (query ? "query" : "show") + "\",\"rows\":" + rows + "}");
        out.flush();
    }

    /** message is the error with its causes, one per line, as Flink's SQL client shows them. */
    static String message(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (b.length() > 0) {
                b.append("\ncaused by: ");
            }
            b.append(t.getClass().getName());
            if (t.getMessage() != null) {
                b.append(": ").append(t.getMessage());
            }
        }
        return b.toString();
    }

    private FlinkSql() {}
}
