package dev.iomap.core.vfs;

import dev.iomap.api.FileNames;
import dev.iomap.api.UnrepresentableNameException;
import java.nio.file.InvalidPathException;
import java.util.List;

/**
 * Parsing of the absolute, '/'-separated paths of {@link dev.iomap.api.IomapFileSystem}. Names are
 * byte strings in {@link FileNames}' form; each is checked with {@link FileNames#check}, so adapters
 * only ever see names that stand for exactly one byte string of 1 to 255 bytes.
 */
final class Paths {

    private Paths() {
    }

    /**
     * @param path an absolute path
     * @return its names, empty for the root
     * @throws UnrepresentableNameException if a name stands for no byte string (EILSEQ)
     * @throws InvalidPathException if it is relative or has an empty, "." or ".." name, a NUL, or a
     *     name longer than {@value FileNames#MAX_NAME_BYTES} bytes
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
            check(path, name);
        }
        return names;
    }

    /** {@link FileNames#check}, with the whole path as the input the exception names. */
    private static void check(String path, String name) {
        try {
            FileNames.check(name);
        } catch (UnrepresentableNameException e) {
            throw new UnrepresentableNameException(path, "name '" + name + "': " + e.getReason());
        } catch (InvalidPathException e) {
            throw new InvalidPathException(path, "name '" + name + "': " + e.getReason());
        }
    }
}
