package io.connectd.interop;

import java.util.ArrayList;
import java.util.List;

/** Splits a SQL script into statements at ';' outside quotes and comments. */
final class Statements {

    /**
     * split returns the statements of sql, without their ';', in order. Quotes are '...' (a
     * doubled '' inside), "..." and `...`; comments are -- to the end of the line and /* ... *&#47;.
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

    private Statements() {}
}
