package cdcformats.jvm.decoders;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * Confluent's wire format of the canonical envelopes, read as {@code kafka/serdes.py}'s {@code _Framing.unframe} reads
 * it: the magic byte {@code 0x00}, the schema id as 4 big-endian bytes, then, for a Protobuf schema, the path of
 * message indexes to the message the body is (zigzag varints: their count, then each; a count of 0 is the path
 * {@code [0]}), which must be the envelope's, {@code [0]}.
 */
public final class ConfluentFraming {
    private ConfluentFraming() {
    }

    /** Where the body starts after the magic byte and the schema id. */
    public static final int HEADER = 5;

    /** The schema id of a framed message, unsigned in an int; a DecodeException on field {@code magic byte}. */
    public static int schemaId(byte[] data) throws DecodeException {
        if (data.length < HEADER || data[0] != 0) {
            throw new DecodeException("not in Confluent's wire format (magic byte 0x00 and a 4-byte schema id)",
                "magic byte");
        }
        return (data[1] & 0xff) << 24 | (data[2] & 0xff) << 16 | (data[3] & 0xff) << 8 | (data[4] & 0xff);
    }

    /** Where the Protobuf body of a framed message starts, after its message indexes, which must be {@code [0]}. */
    public static int protobufBody(byte[] data) throws DecodeException {
        schemaId(data);
        int[] at = {HEADER};
        BigInteger count = index(data, at);
        List<BigInteger> indexes = new ArrayList<>();
        if (count.signum() == 0) {
            indexes.add(BigInteger.ZERO);
        }
        // Each index takes a byte at least, so a count beyond the bytes left ends early, as Python's loop does.
        for (BigInteger read = BigInteger.ZERO; read.compareTo(count) < 0; read = read.add(BigInteger.ONE)) {
            indexes.add(index(data, at));
        }
        if (indexes.size() != 1 || indexes.get(0).signum() != 0) {
            throw new DecodeException("message index " + indexes.toString() + " is not the ChangeEvent envelope [0]",
                "message index");
        }
        return at[0];
    }

    /** {@code _Framing._index}: the zigzag varint at {@code at[0]}, which it moves past, read as {@code read_varint}. */
    private static BigInteger index(byte[] data, int[] at) throws DecodeException {
        BigInteger number = BigInteger.ZERO;
        int shift = 0;
        while (true) {
            if (at[0] >= data.length) {
                throw new DecodeException(shift == 0 ? "the message index ends early"
                    : "the message index ends inside a varint", "message index");
            }
            int octet = data[at[0]++] & 0xff;
            number = number.or(BigInteger.valueOf(octet & 0x7f).shiftLeft(shift));
            if ((octet & 0x80) == 0) {
                // unzigzag: (n >> 1) ^ -(n & 1)
                BigInteger half = number.shiftRight(1);
                return number.testBit(0) ? half.not() : half;
            }
            shift += 7;
            if (shift > 63) {
                throw new DecodeException("the message index a varint is longer than 64 bits", "message index");
            }
        }
    }
}
