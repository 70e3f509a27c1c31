package io.connectd.interop;

import java.util.ArrayList;
import java.util.List;

/** Splits a SQL script into statements at ';' outside quotes and comments. */
final class Statements {

    /**
     * split returns the statements of sql, without their ';', in order. Quotes are '...' (a
     * doubled '' inside), "..." and `...`; comments are -- to the end of the line and /* ... *&#47;.
     * In EXECUTE STATEMENT SET BEGIN ...; ...; END the ';'s of the INSERTs stay in the statement,
     * which the ';' after END ends.
     * A statement that is only blanks and comments is dropped.
     */
    static List<String> split(String sql) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean code = false; // cur holds something besides blanks and comments
        int i = 0;
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                int end = sql.indexOf('\n', i);
                end = end < 0 ? n : end;
                cur.append(sql, i, end);
                i = end;
                continue;
            }
            if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int end = sql.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                cur.append(sql, i, end);
                i = end;
                continue;
            }
            if (c == '\'' || c == '"' || c == '`') {
                int j = i + 1;
                while (j < n) {
                    if (sql.charAt(j) == c) {
                        if (j + 1 < n && sql.charAt(j + 1) == c) {
                            j += 2; // a doubled quote stands for one
                            continue;
                        }
                        break;
                    }
                    j++;
                }
                int end = Math.min(j + 1, n);
                cur.append(sql, i, end);
                code = true;
                i = end;
                continue;
            }
            if (c == ';' && statementSet(cur) && !endsWithEnd(cur)) {
                // Inside EXECUTE STATEMENT SET BEGIN ... END: the ';' ends an INSERT of the set.
                cur.append(c);
                i++;
                continue;
            }
            if (c == ';') {
                if (code) {
                    out.add(cur.toString().strip());
                }
                cur.setLength(0);
                code = false;
                i++;
                continue;
            }
            if (!Character.isWhitespace(c)) {
                code = true;
            }
            cur.append(c);
            i++;
        }
        if (code) {
            out.add(cur.toString().strip());
        }
        return out;
    }

    /** statementSet reports whether the statement so far opens a statement set. */
    private static boolean statementSet(StringBuilder cur) {
        String head = cur.toString().strip().replaceAll("\\s+", " ").toUpperCase(java.util.Locale.ROOT);
        return head.startsWith("EXECUTE STATEMENT SET");
    }

    /** endsWithEnd reports whether the statement so far ends with the word END, closing a set. */
    private static boolean endsWithEnd(StringBuilder cur) {
        String s = cur.toString().strip();
        int n = s.length();
        if (n < 3 || !s.regionMatches(true, n - 3, "END", 0, 3)) {
            return false;
        }
        return n == 3 || Character.isWhitespace(s.charAt(n - 4)) || s.charAt(n - 4) == ';';
    }

    private Statements() {}
}
