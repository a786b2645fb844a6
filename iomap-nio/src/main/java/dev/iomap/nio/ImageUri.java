package dev.iomap.nio;

import dev.iomap.api.FileNames;
import dev.iomap.api.NotSupportedException;
import dev.iomap.devices.nbd.NbdExport;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;

/**
 * The URI of an iomap file system or of a path in it: {@code iomap:ADAPTER:/abs/path/to/image}, and
 * for a path {@code iomap:ADAPTER:/abs/path/to/image!/path/inside}.
 *
 * <p>The URIs this class makes percent-encode every byte but ASCII letters, digits, {@code -._~} and
 * {@code /}: the image path's UTF-8 bytes, and the path inside's {@link FileNames#encode} bytes, so a
 * name that is not UTF-8 (say {@code caf\xe9}) is {@code caf%E9} and comes back as the same name;
 * {@code '!'} in either part is {@code %21}. Parsing takes the raw (still encoded) form: a
 * {@code %XX} is one byte, any other character its UTF-8 bytes (in the path inside, a character
 * given in {@link FileNames}' form is the byte string it stands for).
 *
 * <p>The image may be an NBD export instead of a file: {@code iomap:ADAPTER:nbd://HOST:PORT/EXPORT},
 * the export's address as {@link NbdExport} reads it (percent-encoded or not).
 *
 * @param adapter the adapter's name
 * @param image the image file, absolute and normalized; null for an NBD export
 * @param nbd the NBD export; null for an image file
 * @param inside the absolute path inside the file system, in {@link FileNames}' form, or null for
 *     the file system itself
 */
record ImageUri(String adapter, Path image, NbdExport nbd, String inside) {
    static final String SCHEME = "iomap";
    private static final String FORM = "iomap:ADAPTER:/absolute/path/to/image[!/path/inside]"
            + " or iomap:ADAPTER:nbd://HOST[:PORT]/EXPORT[!/path/inside]";

    /**
     * @param uri a URI of the {@value #SCHEME} scheme
     * @return its parts
     * @throws IllegalArgumentException if it is not of the form {@value #FORM}, or has a bad
     *     percent-escape ({@link dev.iomap.api.UnrepresentableNameException} if the path inside
     *     stands for no byte string), or an NBD address that is bad or one this client cannot use
     *     ({@code nbds://}, {@code nbd+unix://})
     */
    static ImageUri parse(URI uri) {
        if (!SCHEME.equalsIgnoreCase(uri.getScheme()) || !uri.isOpaque()) {
            throw new IllegalArgumentException("not an iomap URI: " + uri + "; expected " + FORM);
        }
        String spec = uri.getRawSchemeSpecificPart();
        int colon = spec.indexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("no adapter name in " + uri + "; expected " + FORM);
        }
        String rest = spec.substring(colon + 1);
        int bang = rest.indexOf('!');
        String image = new String(unquote(bang < 0 ? rest : rest.substring(0, bang), uri),
                StandardCharsets.UTF_8);
        String inside = bang < 0 ? null : FileNames.decode(unquote(rest.substring(bang + 1), uri));
        if (inside != null && !inside.startsWith("/")) {
            throw new IllegalArgumentException("the path after '!' in " + uri + " is not absolute; expected "
                    + FORM);
        }
        String adapter = new String(unquote(spec.substring(0, colon), uri), StandardCharsets.UTF_8);
        if (NbdExport.isNbd(image)) {
            try {
                return new ImageUri(adapter, null, NbdExport.parse(image), inside);
            } catch (NotSupportedException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
        }
        if (!image.startsWith("/")) {
            throw new IllegalArgumentException("the image path in " + uri + " is not absolute; expected " + FORM);
        }
        return new ImageUri(adapter, Path.of(image).normalize(), null, inside);
    }

    /** @return the image file's path, or the NBD export's address: what names the image */
    String location() {
        return nbd != null ? nbd.toString() : image.toString();
    }

    /** @return the URI of the file system (without a path inside) */
    URI fileSystemUri() {
        return toUri(null);
    }

    /**
     * @param path an absolute path inside the file system, in {@link FileNames}' form, or null
     * @return the URI naming it
     */
    URI toUri(String path) {
        StringBuilder spec = new StringBuilder(SCHEME).append(':');
        quote(adapter.getBytes(StandardCharsets.UTF_8), spec);
        spec.append(':');
        quote(location().getBytes(StandardCharsets.UTF_8), spec);
        if (path != null) {
            spec.append('!');
            quote(FileNames.encode(path), spec);
        }
        return URI.create(spec.toString());
    }

    private static void quote(byte[] bytes, StringBuilder out) {
        for (byte b : bytes) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                    || c == '_' || c == '~' || c == '/') {
                out.append(c);
            } else {
                out.append('%').append(HexFormat.of().withUpperCase().toHexDigits(b));
            }
        }
    }

    /** @return the bytes of a raw URI part: each {@code %XX} one byte, other characters their bytes */
    private static byte[] unquote(String raw, URI uri) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        int i = 0;
        while (i < raw.length()) {
            if (raw.charAt(i) == '%') {
                if (i + 2 >= raw.length() || Character.digit(raw.charAt(i + 1), 16) < 0
                        || Character.digit(raw.charAt(i + 2), 16) < 0) {
                    throw new IllegalArgumentException("bad percent-escape at index " + i + " of " + uri);
                }
                bytes.write(HexFormat.fromHexDigits(raw, i + 1, i + 3));
                i += 3;
            } else {
                int end = raw.indexOf('%', i);
                end = end < 0 ? raw.length() : end;
                bytes.writeBytes(FileNames.encode(raw.substring(i, end)));
                i = end;
            }
        }
        return bytes.toByteArray();
    }
}
