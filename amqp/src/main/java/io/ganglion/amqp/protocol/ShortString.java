package io.ganglion.amqp.protocol;

/**
 * The AMQP short string: at most 255 octets of UTF-8. Java strings carry no such limit, so text that may grow (reply
 * texts, names built from user input) is cut here before it is put into a method.
 */
public final class ShortString {
    /** The most octets a short string may hold: its length is one octet. */
    public static final int MAX_OCTETS = 255;

    private ShortString() {}

    /**
     * The length of {@code value} in UTF-8 octets, as the codec writes it (an unpaired surrogate counts as one octet,
     * {@code '?'}).
     */
    public static int utf8Length(CharSequence value) {
        int length = 0;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x80) {
                length += 1;
            } else if (c < 0x800) {
                length += 2;
            } else if (Character.isHighSurrogate(c)
                    && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1))) {
                length += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                length += 1;
            } else {
                length += 3;
            }
        }
        return length;
    }

    /** Whether {@code value} fits in a short string. */
    public static boolean fits(CharSequence value) {
        return value.length() <= MAX_OCTETS / 3 || utf8Length(value) <= MAX_OCTETS;
    }

    /**
     * {@code value} cut at a code point boundary so that it fits in a short string; {@code value} itself when it
     * already fits.
     */
    public static String truncate(String value) {
        if (fits(value)) {
            return value;
        }
        int octets = 0;
        int end = 0;
        while (end < value.length()) {
            int codePoint = value.codePointAt(end);
            int chars = Character.charCount(codePoint);
            int size = utf8Length(value.substring(end, end + chars));
            if (octets + size > MAX_OCTETS) {
                break;
            }
            octets += size;
            end += chars;
        }
        return value.substring(0, end);
    }
}
