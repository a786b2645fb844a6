package dev.iomap.nio;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;

/**
 * The URI of an iomap file system or of a path in it: {@code iomap:ADAPTER:/abs/path/to/image}, and
 * for a path {@code iomap:ADAPTER:/abs/path/to/image!/path/inside}.
 *
 * @param adapter the adapter's name
 * @param image the image file, absolute and normalized
 * @param inside the absolute path inside the file system, or null for the file system itself
 */
record ImageUri(String adapter, Path image, String inside) {
    static final String SCHEME = "iomap";
    private static final String FORM = "iomap:ADAPTER:/absolute/path/to/image[!/path/inside]";

    /**
     * @param uri a URI of the {@value #SCHEME} scheme
     * @return its parts
     * @throws IllegalArgumentException if it is not of the form {@value #FORM}
     */
    static ImageUri parse(URI uri) {
        if (!SCHEME.equalsIgnoreCase(uri.getScheme()) || !uri.isOpaque()) {
            throw new IllegalArgumentException("not an iomap URI: " + uri + "; expected " + FORM);
        }
        String spec = uri.getSchemeSpecificPart();
        int colon = spec.indexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("no adapter name in " + uri + "; expected " + FORM);
        }
        String rest = spec.substring(colon + 1);
        int bang = rest.indexOf('!');
        String image = bang < 0 ? rest : rest.substring(0, bang);
        String inside = bang < 0 ? null : rest.substring(bang + 1);
        if (!image.startsWith("/")) {
            throw new IllegalArgumentException("the image path in " + uri + " is not absolute; expected " + FORM);
        }
        if (inside != null && !inside.startsWith("/")) {
            throw new IllegalArgumentException("the path after '!' in " + uri + " is not absolute; expected "
                    + FORM);
        }
        return new ImageUri(spec.substring(0, colon), Path.of(image).normalize(), inside);
    }

    /** @return the URI of the file system (without a path inside) */
    URI fileSystemUri() {
        return toUri(null);
    }

    /**
     * @param path an absolute path inside the file system, or null
     * @return the URI naming it
     */
    URI toUri(String path) {
        String spec = adapter + ":" + image + (path == null ? "" : "!" + path);
        try {
            return new URI(SCHEME, spec, null);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("cannot build a URI from " + spec, e);
        }
    }
}
