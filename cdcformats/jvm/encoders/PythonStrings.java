package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Python;

/**
 * Python's {@code repr} of a str and of bytes, as error messages and the raw input of a refused row show them: a str
 * as the decoders' {@link Python#repr} writes it, which escapes a character where Python finds it unprintable.
 */
public final class PythonStrings {
    private PythonStrings() {
    }

    /** A str literal, quoted as Python quotes it: single quotes unless the text holds one and no double quote. */
    public static String repr(String text) {
        return Python.repr(text);
    }

    /** A bytes literal: printable ASCII as itself, else {@code \\xNN}, quoted as a str is. */
    public static String bytesRepr(byte[] data) {
        boolean single = false;
        boolean dbl = false;
        for (byte b : data) {
            single |= b == '\'';
            dbl |= b == '"';
        }
        char quote = single && !dbl ? '"' : '\'';
        StringBuilder out = new StringBuilder(data.length + 3).append('b').append(quote);
        for (byte b : data) {
            int c = b & 0xff;
            if (c == quote || c == '\\') {
                out.append('\\').append((char) c);
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c == '\t') {
                out.append("\\t");
            } else if (c < 0x20 || c >= 0x7f) {
                out.append(String.format("\\x%02x", c));
            } else {
                out.append((char) c);
            }
        }
        return out.append(quote).toString();
    }
}
