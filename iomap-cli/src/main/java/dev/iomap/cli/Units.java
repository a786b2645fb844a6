package dev.iomap.cli;

import java.time.Duration;
import java.util.Locale;

/**
 * fio's ways of writing sizes, times and switches, for job files and for command-line values.
 *
 * <p>Sizes: a decimal or {@code 0x} hexadecimal integer with an optional suffix, not case sensitive:
 * {@code k}, {@code m}, {@code g}, {@code t}, {@code p} (optionally followed by {@code b}) and
 * {@code ki}, {@code mi}, … (optionally followed by {@code b}), and a bare {@code b}. With fio's
 * default {@code kb_base=1024} the first set means powers of 1024 and the {@code i} set powers of 1000
 * (fio's compatibility rule, the opposite of SI/IEC); with {@code kb_base=1000} it is the other way
 * round.
 *
 * <p>Times: an integer with an optional suffix {@code d}, {@code h}, {@code m}, {@code s} or
 * {@code sec}, {@code ms} or {@code msec}, {@code us} or {@code usec}; without a suffix, seconds.
 *
 * <p>Every parse method throws {@link IllegalArgumentException} with a message saying what was
 * expected; callers add where the value came from.
 */
public final class Units {

    private Units() {
    }

    /**
     * @param text a size such as {@code 4k}, {@code 64M}, {@code 0x1000}, {@code 1mi}
     * @param kbBase 1024 (fio's default) or 1000
     * @return bytes
     * @throws IllegalArgumentException if the text is not a size or overflows
     */
    public static long parseSize(String text, int kbBase) {
        String value = text.strip().toLowerCase(Locale.ROOT);
        if (value.isEmpty()) {
            throw new IllegalArgumentException("a size is needed, e.g. 4k or 64m");
        }
        int radix = 10;
        int start = 0;
        if (value.startsWith("0x")) {
            radix = 16;
            start = 2;
        }
        int end = start;
        while (end < value.length() && Character.digit(value.charAt(end), radix) >= 0) {
            end++;
        }
        if (end == start) {
            throw new IllegalArgumentException("not a size: '" + text + "' (expected e.g. 4k, 64m, 1g)");
        }
        long number;
        try {
            number = Long.parseLong(value.substring(start, end), radix);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("size '" + text + "' is too large", e);
        }
        long multiplier = sizeMultiplier(value.substring(end).strip(), kbBase, text);
        try {
            return Math.multiplyExact(number, multiplier);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("size '" + text + "' is too large", e);
        }
    }

    private static long sizeMultiplier(String suffix, int kbBase, String text) {
        if (suffix.isEmpty() || suffix.equals("b")) {
            return 1;
        }
        String unit = suffix.endsWith("b") ? suffix.substring(0, suffix.length() - 1) : suffix;
        boolean iec = unit.endsWith("i");
        String prefix = iec ? unit.substring(0, unit.length() - 1) : unit;
        int power = "kmgtp".indexOf(prefix);
        if (prefix.length() != 1 || power < 0) {
            throw new IllegalArgumentException("unknown unit '" + suffix + "' in size '" + text
                    + "' (expected k, m, g, t, p, optionally with i and b)");
        }
        boolean binary = (kbBase == 1024) != iec;
        long base = binary ? 1024 : 1000;
        long multiplier = 1;
        for (int i = 0; i <= power; i++) {
            multiplier *= base;
        }
        return multiplier;
    }

    /**
     * @param text a time such as {@code 60}, {@code 500ms}, {@code 2m}
     * @return the duration
     * @throws IllegalArgumentException if the text is not a time
     */
    public static Duration parseTime(String text) {
        String value = text.strip().toLowerCase(Locale.ROOT);
        int end = 0;
        while (end < value.length() && Character.isDigit(value.charAt(end))) {
            end++;
        }
        if (end == 0) {
            throw new IllegalArgumentException("not a time: '" + text + "' (expected e.g. 60, 30s, 500ms, 2m)");
        }
        long number;
        try {
            number = Long.parseLong(value.substring(0, end));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("time '" + text + "' is too large", e);
        }
        try {
            return switch (value.substring(end).strip()) {
                case "", "s", "sec" -> Duration.ofSeconds(number);
                case "ms", "msec" -> Duration.ofMillis(number);
                case "us", "usec" -> Duration.ofNanos(Math.multiplyExact(number, 1000L));
                case "m" -> Duration.ofMinutes(number);
                case "h" -> Duration.ofHours(number);
                case "d" -> Duration.ofDays(number);
                default -> throw new IllegalArgumentException("unknown unit in time '" + text
                        + "' (expected d, h, m, s, ms or us)");
            };
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("time '" + text + "' is too large", e);
        }
    }

    /**
     * @param text {@code 1}/{@code 0}, {@code true}/{@code false}, {@code yes}/{@code no},
     *     {@code on}/{@code off}
     * @return the switch
     * @throws IllegalArgumentException for anything else
     */
    public static boolean parseBoolean(String text) {
        return switch (text.strip().toLowerCase(Locale.ROOT)) {
            case "1", "true", "yes", "on" -> true;
            case "0", "false", "no", "off" -> false;
            default -> throw new IllegalArgumentException("not a switch: '" + text + "' (expected 1 or 0)");
        };
    }

    /**
     * @param text a decimal integer
     * @param min the least allowed value
     * @param max the largest allowed value
     * @return the value
     * @throws IllegalArgumentException if the text is not such an integer
     */
    public static int parseInt(String text, int min, int max) {
        int value;
        try {
            value = Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not an integer: '" + text + "'", e);
        }
        if (value < min || value > max) {
            throw new IllegalArgumentException(value + " is out of range " + min + ".." + max);
        }
        return value;
    }
}
