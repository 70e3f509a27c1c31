package io.connectd.interop;

import java.lang.reflect.Array;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.MultisetType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.Row;

/**
 * Writes Flink's values of a query's rows (the external classes of TableResult.collect) as JSON,
 * in forms that keep every value exact; the column's type, printed in the result's "columns"
 * line, says how to read each:
 *
 * <pre>
 *   NULL                          null
 *   CHAR, VARCHAR, STRING         string
 *   BOOLEAN                       true | false
 *   TINYINT .. BIGINT             number (an integer)
 *   FLOAT, DOUBLE                 string: Java's Float.toString / Double.toString (exact when parsed
 *                                 back at that width; NaN, Infinity, -Infinity as Java spells them)
 *   DECIMAL(p, s)                 string: BigDecimal.toPlainString, s fraction digits
 *   DATE                          string: yyyy-MM-dd
 *   TIME(p)                       string: HH:mm:ss.nnnnnnnnn (nine fraction digits, always)
 *   TIMESTAMP(p)                  string: yyyy-MM-ddTHH:mm:ss.nnnnnnnnn (a wall-clock time, no zone)
 *   TIMESTAMP_LTZ(p)              string: yyyy-MM-ddTHH:mm:ss.nnnnnnnnnZ (an instant, in UTC)
 *   BINARY, VARBINARY, BYTES      string: standard base64
 *   ARRAY&lt;T&gt;                      array of T
 *   MAP&lt;K, V&gt;, MULTISET&lt;K&gt;        array of [key, value] pairs (a multiset's value is its count)
 *   ROW&lt;...&gt;                      array of the fields' values, in field order
 * </pre>
 */
final class Json {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.nnnnnnnnn");
    private static final DateTimeFormatter DATE = DateTimeFormatter.ofPattern("uuuu-MM-dd");

    /** typeString is the type as Flink's SQL prints it, e.g. DECIMAL(10, 2) NOT NULL. */
    static String typeString(LogicalType t) {
        return t.asSummaryString();
    }

    static void value(StringBuilder b, LogicalType t, Object v) {
        if (v == null) {
            b.append("null");
            return;
        }
        switch (t.getTypeRoot()) {
            case CHAR, VARCHAR -> b.append(quote(v.toString()));
            case BOOLEAN -> b.append(((Boolean) v).booleanValue());
            case TINYINT, SMALLINT, INTEGER, BIGINT -> b.append(((Number) v).longValue());
            case FLOAT -> b.append(quote(Float.toString((Float) v)));
            case DOUBLE -> b.append(quote(Double.toString((Double) v)));
            case DECIMAL -> b.append(quote(((BigDecimal) v).toPlainString()));
            case DATE -> b.append(quote(DATE.format((LocalDate) v)));
            case TIME_WITHOUT_TIME_ZONE -> b.append(quote(TIME.format((LocalTime) v)));
            case TIMESTAMP_WITHOUT_TIME_ZONE -> {
                LocalDateTime ts = (LocalDateTime) v;
                b.append(quote(DATE.format(ts.toLocalDate()) + "T" + TIME.format(ts.toLocalTime())));
            }
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE -> {
                LocalDateTime ts = LocalDateTime.ofInstant((Instant) v, java.time.ZoneOffset.UTC);
                b.append(quote(DATE.format(ts.toLocalDate()) + "T" + TIME.format(ts.toLocalTime()) + "Z"));
            }
            case BINARY, VARBINARY -> b.append(quote(Base64.getEncoder().encodeToString((byte[]) v)));
            case ARRAY -> {
                LogicalType elem = ((ArrayType) t).getElementType();
                b.append('[');
                int n = Array.getLength(v);
                for (int i = 0; i < n; i++) {
                    if (i > 0) {
                        b.append(',');
                    }
                    value(b, elem, Array.get(v, i));
                }
                b.append(']');
            }
            case MAP, MULTISET -> {
                LogicalType kt;
                LogicalType vt;
                if (t instanceof MapType m) {
                    kt = m.getKeyType();
                    vt = m.getValueType();
                } else {
                    kt = ((MultisetType) t).getElementType();
                    vt = new org.apache.flink.table.types.logical.IntType(false);
                }
                // Entries in the order of their JSON text, so equal maps print equal lines.
                List<String> entries = new ArrayList<>();
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    StringBuilder eb = new StringBuilder("[");
                    value(eb, kt, e.getKey());
                    eb.append(',');
                    value(eb, vt, e.getValue());
                    entries.add(eb.append(']').toString());
                }
                entries.sort(null);
                b.append('[').append(String.join(",", entries)).append(']');
            }
            case ROW, STRUCTURED_TYPE -> {
                Row row = (Row) v;
                List<LogicalType> fields = t instanceof RowType r ? r.getChildren() : t.getChildren();
                b.append('[');
                for (int i = 0; i < fields.size(); i++) {
                    if (i > 0) {
                        b.append(',');
                    }
                    value(b, fields.get(i), row.getField(i));
                }
                b.append(']');
            }
            default -> b.append(quote(v.toString()));
        }
    }

    /** quote returns s as a JSON string. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    private Json() {}
}
