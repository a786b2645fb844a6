package dev.iomap.nio;

import dev.iomap.api.FileNames;
import dev.iomap.api.UnrepresentableNameException;
import java.io.IOException;
import java.net.URI;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.ProviderMismatchException;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A path of an {@link IomapNioFileSystem}: '/'-separated names like a Unix path, absolute when it
 * starts with '/'. Purely lexical: {@link #normalize()} folds "." and ".." without looking at the
 * file system (a ".." after a symbolic link goes back over the link's name, not to its target's
 * parent); {@link #toRealPath} resolves every symbolic link ({@code realpath(3)}), or with
 * {@link LinkOption#NOFOLLOW_LINKS} only normalizes and checks that the name exists.
 *
 * <p>Names are byte strings, as in Linux, carried in {@link FileNames}' form: UTF-8 where the bytes
 * are valid UTF-8, every other byte as the lone surrogate {@code U+DC00 + byte} (so the name of bytes
 * {@code caf\xe9} is "caf" + U+DCE9, and {@link Files#newDirectoryStream} gives names in this form).
 * Making a path refuses, with {@link InvalidPathException}, a NUL character and (as its subclass
 * {@link UnrepresentableNameException}, EILSEQ, like the default provider's "unmappable characters")
 * a string that stands for no byte string: a lone surrogate that is no escaped byte, or escaped bytes
 * that spell valid UTF-8 (a second spelling of another name). A name longer than
 * {@value FileNames#MAX_NAME_BYTES} bytes (bytes, not chars) is a valid path; every file operation on
 * it fails with a {@link FileSystemException} whose reason starts "File name too long"
 * (ENAMETOOLONG), as on the default file system. Paths compare by their bytes.
 *
 * <p>Immutable and thread-safe. Repeated slashes and a trailing slash are dropped when the path is
 * made. The empty path has one empty name, as in the default file system.
 */
final class IomapPath implements Path {
    private final IomapNioFileSystem fs;
    private final String path;
    /** Start of each name in {@link #path}; computed on first use. */
    private volatile int[] offsets;

    IomapPath(IomapNioFileSystem fs, String path) {
        this.fs = fs;
        this.path = clean(path);
    }

    private static String clean(String input) {
        if (input.indexOf('\0') >= 0) {
            throw new InvalidPathException(input, "NUL character not allowed");
        }
        checkRepresentable(input);
        var out = new StringBuilder(input.length());
        char previous = 0;
        for (int i = 0; i < input.length(); i++) {
            char c = input.charAt(i);
            if (c == '/' && previous == '/') {
                continue;
            }
            out.append(c);
            previous = c;
        }
        if (out.length() > 1 && out.charAt(out.length() - 1) == '/') {
            out.setLength(out.length() - 1);
        }
        return out.toString();
    }

    /**
     * Refuses a string that stands for no byte string. Checking the whole string checks each name:
     * '/' is ASCII, so it never joins the bytes on either side into one UTF-8 sequence.
     *
     * @throws UnrepresentableNameException if it is not in {@link FileNames}' form
     */
    private static void checkRepresentable(String input) {
        for (int i = 0; i < input.length(); i++) {
            if (Character.isSurrogate(input.charAt(i))) {
                FileNames.encode(input);
                return;
            }
        }
    }

    /**
     * @param other a path given to one of this file system's methods
     * @return it as a path of this provider
     * @throws ProviderMismatchException if it belongs to another provider
     */
    static IomapPath of(Path other) {
        Objects.requireNonNull(other, "path");
        if (!(other instanceof IomapPath p)) {
            throw new ProviderMismatchException("not a path of the iomap provider: " + other.getClass().getName());
        }
        return p;
    }

    private int[] offsets() {
        int[] result = offsets;
        if (result == null) {
            List<Integer> starts = new ArrayList<>();
            if (path.isEmpty()) {
                starts.add(0);
            }
            for (int i = 0; i < path.length(); i++) {
                if (path.charAt(i) != '/' && (i == 0 || path.charAt(i - 1) == '/')) {
                    starts.add(i);
                }
            }
            result = starts.stream().mapToInt(Integer::intValue).toArray();
            offsets = result;
        }
        return result;
    }

    private String name(int index) {
        int[] starts = offsets();
        int end = index + 1 < starts.length ? starts[index + 1] - 1 : path.length();
        return path.substring(starts[index], end);
    }

    private List<String> names() {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < getNameCount(); i++) {
            names.add(name(i));
        }
        return names;
    }

    /** @return the absolute, normalized path, unchecked (for comparing and URIs) */
    String normalPath() {
        return ((IomapPath) toAbsolutePath().normalize()).path;
    }

    /**
     * @return the absolute, normalized path the API of the mounted file system takes
     * @throws FileSystemException "File name too long" (ENAMETOOLONG) if a name is longer than
     *     {@value FileNames#MAX_NAME_BYTES} bytes, which the mounted file system would refuse with an
     *     unchecked {@link InvalidPathException}
     */
    String fsPath() throws FileSystemException {
        IomapPath normal = (IomapPath) toAbsolutePath().normalize();
        for (String name : normal.names()) {
            int bytes = FileNames.byteLength(name);
            if (bytes > FileNames.MAX_NAME_BYTES) {
                throw new FileSystemException(toString(), null, "File name too long: a name of " + bytes
                        + " bytes, the most is " + FileNames.MAX_NAME_BYTES);
            }
        }
        return normal.path;
    }

    @Override
    public IomapNioFileSystem getFileSystem() {
        return fs;
    }

    @Override
    public boolean isAbsolute() {
        return path.startsWith("/");
    }

    @Override
    public Path getRoot() {
        return isAbsolute() ? new IomapPath(fs, "/") : null;
    }

    @Override
    public Path getFileName() {
        int count = getNameCount();
        if (count == 0) {
            return null;
        }
        if (count == 1 && !isAbsolute()) {
            return this;
        }
        return new IomapPath(fs, name(count - 1));
    }

    @Override
    public Path getParent() {
        int count = getNameCount();
        if (count == 0) {
            return null;
        }
        if (count == 1) {
            return getRoot();
        }
        return new IomapPath(fs, path.substring(0, offsets()[count - 1] - 1));
    }

    @Override
    public int getNameCount() {
        return offsets().length;
    }

    @Override
    public Path getName(int index) {
        if (index < 0 || index >= getNameCount()) {
            throw new IllegalArgumentException("name index " + index + " out of range for " + this);
        }
        return new IomapPath(fs, name(index));
    }

    @Override
    public Path subpath(int beginIndex, int endIndex) {
        if (beginIndex < 0 || endIndex > getNameCount() || beginIndex >= endIndex) {
            throw new IllegalArgumentException("subpath [" + beginIndex + ", " + endIndex + ") out of range for "
                    + this);
        }
        return new IomapPath(fs, String.join("/", names().subList(beginIndex, endIndex)));
    }

    @Override
    public boolean startsWith(Path other) {
        if (!(other instanceof IomapPath that) || that.fs != fs || that.isAbsolute() != isAbsolute()) {
            return false;
        }
        if (that.path.isEmpty()) {
            return path.isEmpty();
        }
        int count = that.getNameCount();
        return count <= getNameCount() && names().subList(0, count).equals(that.names());
    }

    @Override
    public boolean endsWith(Path other) {
        if (!(other instanceof IomapPath that) || that.fs != fs) {
            return false;
        }
        if (that.isAbsolute()) {
            return that.path.equals(path);
        }
        if (that.path.isEmpty()) {
            return path.isEmpty();
        }
        int count = that.getNameCount();
        int mine = getNameCount();
        return count <= mine && names().subList(mine - count, mine).equals(that.names());
    }

    @Override
    public Path normalize() {
        List<String> kept = new ArrayList<>();
        for (String name : names()) {
            if (name.equals(".") || name.isEmpty()) {
                continue;
            }
            if (name.equals("..")) {
                if (!kept.isEmpty() && !kept.getLast().equals("..")) {
                    kept.removeLast();
                    continue;
                }
                if (isAbsolute()) {
                    continue;
                }
            }
            kept.add(name);
        }
        return new IomapPath(fs, (isAbsolute() ? "/" : "") + String.join("/", kept));
    }

    @Override
    public Path resolve(Path other) {
        IomapPath that = of(other);
        if (that.isAbsolute()) {
            return that;
        }
        if (that.path.isEmpty()) {
            return this;
        }
        if (path.isEmpty()) {
            return that;
        }
        return new IomapPath(fs, path + "/" + that.path);
    }

    @Override
    public Path relativize(Path other) {
        IomapPath that = of(other);
        if (that.isAbsolute() != isAbsolute()) {
            throw new IllegalArgumentException("cannot relativize " + other + " against " + this
                    + ": one is absolute, the other is not");
        }
        if (that.path.equals(path)) {
            return new IomapPath(fs, "");
        }
        if (path.isEmpty()) {
            return that;
        }
        List<String> from = names();
        List<String> to = that.path.isEmpty() ? List.of() : that.names();
        int common = 0;
        while (common < from.size() && common < to.size() && from.get(common).equals(to.get(common))) {
            common++;
        }
        List<String> result = new ArrayList<>();
        for (int i = common; i < from.size(); i++) {
            result.add("..");
        }
        result.addAll(to.subList(common, to.size()));
        return new IomapPath(fs, String.join("/", result));
    }

    @Override
    public URI toUri() {
        return fs.imageUri().toUri(normalPath());
    }

    @Override
    public Path toAbsolutePath() {
        return isAbsolute() ? this : new IomapPath(fs, "/" + path);
    }

    /**
     * @return the absolute path of the same file with every symbolic link resolved; with
     *     {@link LinkOption#NOFOLLOW_LINKS}, the absolute, normalized path, whose last name may be a link
     * @throws java.nio.file.NoSuchFileException if the file (or a link's target) does not exist
     * @throws dev.iomap.api.SymlinkLoopException if resolving meets a loop of links
     */
    @Override
    public Path toRealPath(LinkOption... options) throws IOException {
        return fs.realPath(this, LinkOptions.follow(options));
    }

    @Override
    public WatchKey register(WatchService watcher, WatchEvent.Kind<?>[] events, WatchEvent.Modifier... modifiers) {
        throw new UnsupportedOperationException("iomap file systems have no watch service (register "
                + Arrays.toString(events) + " on " + this + ")");
    }

    /** Orders paths by their bytes ({@link FileNames#BYTE_ORDER}), as the default provider does. */
    @Override
    public int compareTo(Path other) {
        return FileNames.BYTE_ORDER.compare(path, of(other).path);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof IomapPath that && that.fs == fs && that.path.equals(path);
    }

    @Override
    public int hashCode() {
        return path.hashCode();
    }

    @Override
    public String toString() {
        return path;
    }
}
