package dev.iomap.devices.nbd;

import dev.iomap.api.NotSupportedException;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where an NBD export is and how to use it, as written wherever an image path is accepted:
 * {@code nbd://HOST[:PORT][/EXPORT][?OPTION=VALUE&...]} (the URI form of libnbd and qemu). The port
 * defaults to {@value NbdProtocol#DEFAULT_PORT}; no export name, or an empty one, is the server's
 * default export; the name is percent-decoded. Options: {@code retry=DURATION} (how long to keep
 * reconnecting after the connection drops, {@link NbdOptions#reconnectWindow}), {@code timeout=DURATION}
 * (how long a request may wait for its reply, {@link NbdOptions#replyTimeout}), {@code fua=on|off}
 * (write-through, {@link NbdOptions#forceUnitAccess}); a duration is a whole number of seconds, or of
 * milliseconds with {@code ms}.
 *
 * <p>{@code nbds://} (NBD over TLS) and {@code nbd+unix://} are recognised, so that they are refused in
 * so many words ({@link NbdTlsException}, {@link NotSupportedException}) rather than taken for file names.
 *
 * @param host the server's host name or address (an IPv6 address without brackets)
 * @param port the server's TCP port
 * @param name the export's name; empty for the default export
 * @param options how to talk to it
 */
public record NbdExport(String host, int port, String name, NbdOptions options) {
    private static final String FORM = "nbd://HOST[:PORT][/EXPORT][?retry=SECONDS&timeout=SECONDS&fua=on]";
    private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s)?");

    /**
     * Checks the values.
     *
     * @throws IllegalArgumentException if the host is empty or the port not 1 to 65535
     */
    public NbdExport {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        if (host.isEmpty()) {
            throw new IllegalArgumentException("an NBD export needs a host: " + FORM);
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("NBD port " + port + " is not 1 to 65535");
        }
    }

    /**
     * @param host the server's host name or address
     * @param port its TCP port
     * @param name the export's name; empty for the default export
     * @return the export, with {@link NbdOptions#DEFAULTS}
     */
    public static NbdExport of(String host, int port, String name) {
        return new NbdExport(host, port, name, NbdOptions.DEFAULTS);
    }

    /**
     * @param spec an image argument as given
     * @return whether it is written as an NBD address ({@code nbd://}, {@code nbds://} or
     *     {@code nbd+...://}, in any case), to be {@link #parse parsed} rather than taken for a file
     */
    public static boolean isNbd(String spec) {
        String lower = spec.toLowerCase(Locale.ROOT);
        return lower.startsWith("nbd://") || lower.startsWith("nbds://") || lower.startsWith("nbd+");
    }

    /**
     * @param spec {@code nbd://HOST[:PORT][/EXPORT][?OPTIONS]}
     * @return the export it names
     * @throws NbdTlsException for {@code nbds://}: this client does not speak TLS
     * @throws NotSupportedException for another transport ({@code nbd+unix://} ...)
     * @throws IllegalArgumentException if it is not of that form, saying what is wrong
     */
    public static NbdExport parse(String spec) throws NotSupportedException {
        String lower = spec.toLowerCase(Locale.ROOT);
        if (lower.startsWith("nbds://") || lower.startsWith("nbds+")) {
            throw new NbdTlsException(spec + ": NBD over TLS is not supported by this client; serve the export"
                    + " without TLS on a trusted network, or tunnel it (stunnel, ssh -L) and give nbd://");
        }
        if (!lower.startsWith("nbd://")) {
            throw new NotSupportedException(spec + ": only NBD over TCP is supported (" + FORM + ")");
        }
        URI uri;
        try {
            uri = new URI(spec);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("bad NBD address '" + spec + "': " + e.getReason() + "; expected "
                    + FORM, e);
        }
        String host = uri.getHost();
        if (host == null || uri.getRawUserInfo() != null || uri.getRawFragment() != null) {
            throw new IllegalArgumentException("bad NBD address '" + spec + "': expected " + FORM);
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = uri.getPort() < 0 ? NbdProtocol.DEFAULT_PORT : uri.getPort();
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        String name = path.isEmpty() ? "" : decode(path.substring(1), spec);
        return new NbdExport(host, port, name, options(uri.getRawQuery(), spec));
    }

    /** @return the address in the form {@link #parse} reads, with the options that are not the defaults */
    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("nbd://");
        text.append(host.contains(":") ? "[" + host + "]" : host).append(':').append(port).append('/');
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~/".indexOf(c) >= 0) {
                text.append(c);
            } else {
                text.append('%').append(HexFormat.of().withUpperCase().toHexDigits(b));
            }
        }
        String query = query();
        return query.isEmpty() ? text.toString() : text.append('?').append(query).toString();
    }

    private String query() {
        StringBuilder query = new StringBuilder();
        NbdOptions defaults = NbdOptions.DEFAULTS;
        if (!options.reconnectWindow().equals(defaults.reconnectWindow())) {
            query.append("&retry=").append(options.reconnectWindow().toMillis()).append("ms");
        }
        if (!options.replyTimeout().equals(defaults.replyTimeout())) {
            query.append("&timeout=").append(options.replyTimeout().toMillis()).append("ms");
        }
        if (options.forceUnitAccess()) {
            query.append("&fua=on");
        }
        return query.isEmpty() ? "" : query.substring(1);
    }

    private static NbdOptions options(String rawQuery, String spec) {
        NbdOptions options = NbdOptions.DEFAULTS;
        if (rawQuery == null || rawQuery.isEmpty()) {
            return options;
        }
        for (String pair : rawQuery.split("&")) {
            int equals = pair.indexOf('=');
            String key = equals < 0 ? pair : pair.substring(0, equals);
            String value = equals < 0 ? "" : decode(pair.substring(equals + 1), spec);
            options = switch (key) {
                case "retry" -> options.withReconnectWindow(duration(key, value, spec, true));
                case "timeout" -> options.withReplyTimeout(duration(key, value, spec, false));
                case "fua" -> options.withForceUnitAccess(onOff(value, spec));
                default -> throw new IllegalArgumentException("bad NBD address '" + spec + "': no option '" + key
                        + "' (have retry=, timeout= and fua=)");
            };
        }
        return options;
    }

    private static Duration duration(String key, String value, String spec, boolean zeroAllowed) {
        Matcher matcher = DURATION.matcher(value);
        if (!matcher.matches()) {
            throw new IllegalArgumentException("bad NBD address '" + spec + "': " + key + "=" + value
                    + " is not a whole number of seconds (or of milliseconds with ms)");
        }
        long amount = Long.parseLong(matcher.group(1));
        Duration duration = "ms".equals(matcher.group(2)) ? Duration.ofMillis(amount) : Duration.ofSeconds(amount);
        if (duration.isZero() && !zeroAllowed) {
            throw new IllegalArgumentException("bad NBD address '" + spec + "': " + key + " must be positive");
        }
        return duration;
    }

    private static boolean onOff(String value, String spec) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "on", "true", "1" -> true;
            case "off", "false", "0" -> false;
            default -> throw new IllegalArgumentException("bad NBD address '" + spec + "': fua=" + value
                    + " (have fua=on and fua=off)");
        };
    }

    /** @return the UTF-8 string a percent-encoded part stands for */
    private static String decode(String raw, String spec) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        int i = 0;
        while (i < raw.length()) {
            if (raw.charAt(i) != '%') {
                int end = raw.indexOf('%', i);
                end = end < 0 ? raw.length() : end;
                bytes.writeBytes(raw.substring(i, end).getBytes(StandardCharsets.UTF_8));
                i = end;
                continue;
            }
            if (i + 2 >= raw.length() || Character.digit(raw.charAt(i + 1), 16) < 0
                    || Character.digit(raw.charAt(i + 2), 16) < 0) {
                throw new IllegalArgumentException("bad NBD address '" + spec + "': bad percent-escape at '"
                        + raw.substring(i) + "'");
            }
            bytes.write(HexFormat.fromHexDigits(raw, i + 1, i + 3));
            i += 3;
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
