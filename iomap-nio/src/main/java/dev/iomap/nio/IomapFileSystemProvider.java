package dev.iomap.nio;

import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.AccessMode;
import java.nio.file.CopyOption;
import java.nio.file.DirectoryStream;
import java.nio.file.FileStore;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemAlreadyExistsException;
import java.nio.file.FileSystemNotFoundException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.FileAttributeView;
import java.nio.file.spi.FileSystemProvider;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The {@code iomap} scheme of {@code java.nio.file}: an adapter's image file as a
 * {@link FileSystem}.
 *
 * <pre>{@code
 * try (FileSystem fs = FileSystems.newFileSystem(URI.create("iomap:xfs-like:/tmp/disk.img"),
 *         Map.of("create", "true", "size", "64m"))) {
 *     Files.writeString(fs.getPath("/hello.txt"), "hello");
 * }
 * }</pre>
 *
 * <p>The URI is {@code iomap:ADAPTER:/absolute/path/to/image}; a path's URI appends
 * {@code !/path/inside}. The image is opened as a {@link FileBlockDevice} and mounted with
 * {@link IomapFileSystems#mount}; {@link FileSystem#close()} unmounts it cleanly. The options of the
 * {@code env} map are listed in {@link FileSystemEnv}. One open file system per image at a time.
 *
 * <p>Supported: {@code Files} operations on regular files and directories, {@link FileChannel}s
 * (read, write, position, size, truncate, force), directory streams and the "basic" attribute view
 * (the file key is the inode number). Not supported: links, permissions, setting times, watch
 * services, memory mapping and file locks ({@link UnsupportedOperationException}).
 *
 * <p>File names are byte strings, as in Linux, carried in {@link dev.iomap.api.FileNames}' form
 * (UTF-8 where valid, every other byte as the lone surrogate {@code U+DC00 + byte}): directory
 * streams give names in that form, and such a name opens, renames and deletes the file with exactly
 * those bytes. Making a path from a string that stands for no byte string (a lone surrogate that is
 * no escaped byte, or escaped bytes that spell valid UTF-8) throws
 * {@link dev.iomap.api.UnrepresentableNameException}, an {@link java.nio.file.InvalidPathException}
 * (EILSEQ). A name over 255 bytes (bytes, not chars) makes a path, but every operation on it throws a
 * {@link java.nio.file.FileSystemException} whose reason starts "File name too long". A path's URI
 * percent-encodes the name's bytes ({@code caf%E9}), so it names the same file.
 *
 * <p>Thread-safe.
 */
public final class IomapFileSystemProvider extends FileSystemProvider {
    private final Map<Path, IomapNioFileSystem> open = new HashMap<>();

    /** Found by {@link java.util.ServiceLoader} as an installed provider. */
    public IomapFileSystemProvider() {
    }

    @Override
    public String getScheme() {
        return ImageUri.SCHEME;
    }

    /**
     * Mounts an image (formatting a new one first if {@code env} says {@code create} and the file
     * does not exist).
     *
     * @throws FileSystemAlreadyExistsException if the image is already open through this provider
     * @throws NoSuchFileException if the image does not exist and {@code create} is not set
     * @throws IllegalArgumentException for a malformed URI or an unknown or bad option
     * @throws IOException if the image cannot be opened, formatted or mounted
     */
    @Override
    public FileSystem newFileSystem(URI uri, Map<String, ?> env) throws IOException {
        ImageUri image = ImageUri.parse(uri);
        FileSystemEnv settings = FileSystemEnv.parse(env);
        synchronized (open) {
            if (open.containsKey(image.image())) {
                throw new FileSystemAlreadyExistsException(image.fileSystemUri().toString());
            }
            IomapNioFileSystem fs = mount(image, settings);
            open.put(image.image(), fs);
            return fs;
        }
    }

    private IomapNioFileSystem mount(ImageUri image, FileSystemEnv settings) throws IOException {
        Path file = image.image();
        boolean format = !Files.exists(file);
        if (format && !settings.create()) {
            throw new NoSuchFileException(file.toString(), null,
                    "no such image; pass \"create\"=\"true\" (and a \"size\") to format a new one");
        }
        FileBlockDevice device = format
                ? FileBlockDevice.open(file, settings.deviceBlockSize(), settings.size(), settings.directIo())
                : FileBlockDevice.open(file, settings.deviceBlockSize(), settings.directIo());
        try {
            if (format) {
                IomapFileSystems.format(image.adapter(), device, settings.format());
            }
            IomapFileSystem fs = IomapFileSystems.mount(image.adapter(), device, settings.mount());
            return new IomapNioFileSystem(this, image, fs, device);
        } catch (IOException | RuntimeException e) {
            try {
                device.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    void forget(Path image) {
        synchronized (open) {
            open.remove(image);
        }
    }

    @Override
    public FileSystem getFileSystem(URI uri) {
        ImageUri image = ImageUri.parse(uri);
        synchronized (open) {
            IomapNioFileSystem fs = open.get(image.image());
            if (fs == null) {
                throw new FileSystemNotFoundException(image.fileSystemUri() + " is not open");
            }
            return fs;
        }
    }

    @Override
    public Path getPath(URI uri) {
        ImageUri image = ImageUri.parse(uri);
        return getFileSystem(uri).getPath(image.inside() == null ? "/" : image.inside());
    }

    @Override
    public SeekableByteChannel newByteChannel(Path path, Set<? extends OpenOption> options,
            FileAttribute<?>... attrs) throws IOException {
        return newFileChannel(path, options, attrs);
    }

    @Override
    public FileChannel newFileChannel(Path path, Set<? extends OpenOption> options, FileAttribute<?>... attrs)
            throws IOException {
        refuseAttributes(attrs);
        IomapPath p = IomapPath.of(path);
        return p.getFileSystem().newChannel(p, OpenFlags.of(options));
    }

    @Override
    public DirectoryStream<Path> newDirectoryStream(Path dir, DirectoryStream.Filter<? super Path> filter)
            throws IOException {
        IomapPath p = IomapPath.of(dir);
        return p.getFileSystem().newDirectoryStream(p, filter);
    }

    @Override
    public void createDirectory(Path dir, FileAttribute<?>... attrs) throws IOException {
        refuseAttributes(attrs);
        IomapPath p = IomapPath.of(dir);
        p.getFileSystem().createDirectory(p);
    }

    private static void refuseAttributes(FileAttribute<?>[] attrs) {
        if (attrs.length > 0) {
            throw new UnsupportedOperationException("iomap file systems take no initial attributes, got "
                    + attrs[0].name());
        }
    }

    @Override
    public void delete(Path path) throws IOException {
        IomapPath p = IomapPath.of(path);
        p.getFileSystem().delete(p);
    }

    @Override
    public void copy(Path source, Path target, CopyOption... options) throws IOException {
        CopyMove.copy(IomapPath.of(source), IomapPath.of(target), options);
    }

    @Override
    public void move(Path source, Path target, CopyOption... options) throws IOException {
        CopyMove.move(IomapPath.of(source), IomapPath.of(target), options);
    }

    @Override
    public boolean isSameFile(Path path, Path path2) throws IOException {
        IomapPath first = IomapPath.of(path);
        if (first.equals(path2)) {
            return true;
        }
        if (!(path2 instanceof IomapPath second) || second.getFileSystem() != first.getFileSystem()) {
            return false;
        }
        return first.getFileSystem().stat(first).ino() == second.getFileSystem().stat(second).ino();
    }

    @Override
    public boolean isHidden(Path path) {
        Path name = IomapPath.of(path).getFileName();
        return name != null && name.toString().startsWith(".");
    }

    @Override
    public FileStore getFileStore(Path path) throws IOException {
        IomapPath p = IomapPath.of(path);
        p.getFileSystem().stat(p);
        return p.getFileSystem().fileStore();
    }

    /** Checks that the file exists; every access mode is granted (there are no permissions). */
    @Override
    public void checkAccess(Path path, AccessMode... modes) throws IOException {
        IomapPath p = IomapPath.of(path);
        p.getFileSystem().stat(p);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <V extends FileAttributeView> V getFileAttributeView(Path path, Class<V> type, LinkOption... options) {
        IomapPath p = IomapPath.of(path);
        if (type != BasicFileAttributeView.class) {
            return null;
        }
        return (V) new IomapFileAttributeView(p);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <A extends BasicFileAttributes> A readAttributes(Path path, Class<A> type, LinkOption... options)
            throws IOException {
        IomapPath p = IomapPath.of(path);
        if (type != BasicFileAttributes.class) {
            throw new UnsupportedOperationException("iomap file systems have only basic attributes, not "
                    + type.getSimpleName());
        }
        return (A) p.getFileSystem().readAttributes(p);
    }

    @Override
    public Map<String, Object> readAttributes(Path path, String attributes, LinkOption... options)
            throws IOException {
        IomapPath p = IomapPath.of(path);
        int colon = attributes.indexOf(':');
        String view = colon < 0 ? "basic" : attributes.substring(0, colon);
        if (!view.equals("basic")) {
            throw new UnsupportedOperationException("iomap file systems have only the basic view, not '"
                    + view + "'");
        }
        String names = colon < 0 ? attributes : attributes.substring(colon + 1);
        return p.getFileSystem().readAttributes(p).toMap(names.split(","));
    }

    @Override
    public void setAttribute(Path path, String attribute, Object value, LinkOption... options) {
        IomapPath.of(path);
        throw new UnsupportedOperationException("iomap file systems keep their own times and have no settable"
                + " attributes (" + attribute + ")");
    }
}
