package cdcformats.jvm.encoders;

/**
 * Python's {@code repr} of a str and of bytes, as error messages and the raw input of a refused row show them. A
 * character of a str is escaped where Python finds it unprintable, told by its Unicode category as Java knows it: Java
 * 17 knows Unicode 13, Python 3.11 Unicode 14, so a character assigned in between is escaped here and shown by Python.
 */
public final class PythonStrings {
    private PythonStrings() {
    }

    /** A str literal, quoted as Python quotes it: single quotes unless the text holds one and no double quote. */
    public static String repr(String text) {
        StringBuilder out = new StringBuilder();
        char quote = text.indexOf('\'') >= 0 && text.indexOf('"') < 0 ? '"' : '\'';
        out.append(quote);
        text.codePoints().forEach(point -> {
            if (point == quote || point == '\\') {
                out.append('\\').appendCodePoint(point);
            } else if (point == '\n') {
                out.append("\\n");
            } else if (point == '\r') {
                out.append("\\r");
            } else if (point == '\t') {
                out.append("\\t");
            } else if (point < 0x7f && point >= 0x20) {
                out.append((char) point);
            } else if (unprintable(point)) {
                out.append(String.format(point < 0x100 ? "\\x%02x" : point < 0x10000 ? "\\u%04x" : "\\U%08x", point));
            } else {
                out.appendCodePoint(point);
            }
        });
        return out.append(quote).toString();
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

    private static boolean unprintable(int point) {
        switch (Character.getType(point)) {
            case Character.CONTROL:
            case Character.FORMAT:
            case Character.SURROGATE:
            case Character.PRIVATE_USE:
            case Character.UNASSIGNED:
            case Character.LINE_SEPARATOR:
            case Character.PARAGRAPH_SEPARATOR:
            case Character.SPACE_SEPARATOR:
                return true;
            default:
                return false;
        }
    }
}
