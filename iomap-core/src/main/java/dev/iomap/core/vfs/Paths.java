package dev.iomap.core.vfs;

import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.util.List;

/** Parsing of the absolute, '/'-separated paths of {@link dev.iomap.api.IomapFileSystem}. */
final class Paths {
    /** The longest name, in bytes of UTF-8, as in Linux. */
    static final int MAX_NAME_BYTES = 255;

    private Paths() {
    }

    /**
     * @param path an absolute path
     * @return its names, empty for the root
     * @throws InvalidPathException if it is relative or has an empty, "." or ".." name, a NUL, or a
     *     name longer than 255 bytes
     */
    static List<String> names(String path) {
        if (path == null || !path.startsWith("/")) {
            throw new InvalidPathException(String.valueOf(path), "path must be absolute");
        }
        if (path.equals("/")) {
            return List.of();
        }
        String trimmed = path.endsWith("/") ? path.substring(1, path.length() - 1) : path.substring(1);
        List<String> names = List.of(trimmed.split("/", -1));
        for (String name : names) {
            if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('\0') >= 0) {
                throw new InvalidPathException(path, "empty, '.', '..' or NUL name '" + name + "'");
            }
            if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
                throw new InvalidPathException(path, "name longer than " + MAX_NAME_BYTES + " bytes");
            }
        }
        return names;
    }
}
