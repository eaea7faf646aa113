package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Python;

/**
 * Python's {@code repr} of a str, as error messages and the raw input of a refused row show text: the decoders'
 * {@link Python#repr}, which escapes a character where Python finds it unprintable.
 */
public final class PythonStrings {
    private PythonStrings() {
    }

    /** A str literal, quoted as Python quotes it: single quotes unless the text holds one and no double quote. */
    public static String repr(String text) {
        return Python.repr(text);
    }
}
