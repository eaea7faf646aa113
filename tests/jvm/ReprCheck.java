import cdcformats.jvm.decoders.Python;

/**
 * Prints, for every code point that is a character of its own, 1 where {@code Python.repr} shows it as it is and 0
 * where it escapes it: {@code tests/integration/test_jvm_repr.py} holds that to Python's {@code str.isprintable}.
 */
public final class ReprCheck {
    private ReprCheck() {
    }

    public static void main(String[] arguments) {
        StringBuilder shown = new StringBuilder(0x110000);
        for (int c = 0; c <= 0x10FFFF; c++) {
            String text = new String(Character.toChars(c));
            String repr = Python.repr(text);
            shown.append(repr.equals("'" + text + "'") || repr.equals("\"" + text + "\"") ? '1' : '0');
        }
        System.out.print(shown);
    }
}
