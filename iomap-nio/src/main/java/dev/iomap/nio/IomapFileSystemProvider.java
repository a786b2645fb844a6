package dev.iomap.nio;

import dev.iomap.api.Capability;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.device.BlockDevice;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.devices.ZonedDevice;
import dev.iomap.devices.nbd.NbdBlockDevice;
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
import java.nio.file.attribute.FileOwnerAttributeView;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.UserDefinedFileAttributeView;
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
 * {@code !/path/inside}. The image is opened as a {@link FileBlockDevice} (as the {@link ZonedDevice}
 * it holds, for a zoned image such as zonefs-like's) and mounted with
 * {@link IomapFileSystems#mount}; {@link FileSystem#close()} unmounts it cleanly. The options of the
 * {@code env} map are listed in {@link FileSystemEnv}. One open file system per image at a time.
 *
 * <p>The image may be an NBD export, {@code iomap:ADAPTER:nbd://HOST[:PORT]/EXPORT}: it is opened as an
 * {@link NbdBlockDevice} with the {@code deviceBlockSize} of {@code env}, and must already hold the
 * adapter's filesystem ({@code iomap mkfs ... nbd://...}): an export always exists, so, as for an existing
 * image file, {@code create} never formats it.
 *
 * <p>Supported: {@code Files} operations on regular files and directories, {@link FileChannel}s
 * (read, write, position, size, truncate, force), directory streams and the "basic" attribute view
 * (the file key is the inode number). As the adapter declares them
 * ({@link dev.iomap.api.Capability}): symbolic links ({@code SYMLINKS}) and hard links
 * ({@code HARD_LINKS}), with {@link LinkOption#NOFOLLOW_LINKS} honoured wherever it is accepted; the
 * "posix", "unix" and "owner" views, setting times and a {@link java.nio.file.attribute.UserPrincipalLookupService}
 * ({@code POSIX_ATTRIBUTES}); the "user" view of extended attributes ({@code XATTRS}). Without the
 * capability these are {@link UnsupportedOperationException}s (and {@code getFileAttributeView} gives
 * null), as the JDK's contract says. Not supported: watch services, memory mapping and file locks.
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
    /** Open file systems by {@link ImageUri#location()}. */
    private final Map<String, IomapNioFileSystem> open = new HashMap<>();

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
            if (open.containsKey(image.location())) {
                throw new FileSystemAlreadyExistsException(image.fileSystemUri().toString());
            }
            IomapNioFileSystem fs = mount(image, settings);
            open.put(image.location(), fs);
            return fs;
        }
    }

    private IomapNioFileSystem mount(ImageUri image, FileSystemEnv settings) throws IOException {
        if (image.nbd() != null) {
            return mount(image, settings, zonedIfZoned(NbdBlockDevice.open(image.nbd(), settings.deviceBlockSize())),
                    false);
        }
        Path file = image.image();
        boolean format = !Files.exists(file);
        if (format && !settings.create()) {
            throw new NoSuchFileException(file.toString(), null,
                    "no such image; pass \"create\"=\"true\" (and a \"size\") to format a new one");
        }
        BlockDevice device = format
                ? FileBlockDevice.open(file, settings.deviceBlockSize(), settings.size(), settings.directIo())
                : zonedIfZoned(FileBlockDevice.open(file, settings.deviceBlockSize(), settings.directIo()));
        return mount(image, settings, device, format);
    }

    /** Formats {@code device} if asked, mounts it, and closes it if that fails. */
    private IomapNioFileSystem mount(ImageUri image, FileSystemEnv settings, BlockDevice device, boolean format)
            throws IOException {
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

    /**
     * An existing image that holds an emulated zoned device (made by {@code iomap mkfs --adapter
     * zonefs-like -o zone-size=...}: the zones' geometry and state in front of them) is opened as that
     * zoned device, so that a zoned adapter sees its zones.
     *
     * @return {@code device}, or the zoned device it holds over it; on failure {@code device} is closed
     */
    private static BlockDevice zonedIfZoned(BlockDevice device) throws IOException {
        try {
            return ZonedDevice.holdsZones(device) ? ZonedDevice.open(device) : device;
        } catch (IOException | RuntimeException e) {
            try (device) {
                throw e;
            }
        }
    }

    void forget(String image) {
        synchronized (open) {
            open.remove(image);
        }
    }

    @Override
    public FileSystem getFileSystem(URI uri) {
        ImageUri image = ImageUri.parse(uri);
        synchronized (open) {
            IomapNioFileSystem fs = open.get(image.location());
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

    /** As {@link #newFileChannel}. */
    @Override
    public SeekableByteChannel newByteChannel(Path path, Set<? extends OpenOption> options,
            FileAttribute<?>... attrs) throws IOException {
        return newFileChannel(path, options, attrs);
    }

    /**
     * Opens a channel on a regular file. {@code NOFOLLOW_LINKS} refuses a symbolic link as the last name
     * with a {@link java.nio.file.FileSystemException} "Too many levels of symbolic links" (ELOOP, as
     * {@code O_NOFOLLOW} does). The permissions among {@code attrs} are the mode of a file it creates.
     *
     * @throws UnsupportedOperationException for an attribute other than the permissions, or the
     *     permissions on a file system that keeps none
     */
    @Override
    public FileChannel newFileChannel(Path path, Set<? extends OpenOption> options, FileAttribute<?>... attrs)
            throws IOException {
        IomapPath p = IomapPath.of(path);
        return p.getFileSystem().newChannel(p, OpenFlags.of(options), attrs);
    }

    @Override
    public DirectoryStream<Path> newDirectoryStream(Path dir, DirectoryStream.Filter<? super Path> filter)
            throws IOException {
        IomapPath p = IomapPath.of(dir);
        return p.getFileSystem().newDirectoryStream(p, filter);
    }

    /**
     * The permissions among {@code attrs} are the new directory's mode.
     *
     * @throws UnsupportedOperationException for an attribute other than the permissions, or the
     *     permissions on a file system that keeps none
     */
    @Override
    public void createDirectory(Path dir, FileAttribute<?>... attrs) throws IOException {
        IomapPath p = IomapPath.of(dir);
        p.getFileSystem().createDirectory(p, attrs);
    }

    /**
     * Creates a symbolic link holding {@code target}'s string (a relative target resolves from the
     * link's directory). Permissions among {@code attrs} are ignored: a link's mode is always
     * {@code 0777}, as in Linux.
     *
     * @throws UnsupportedOperationException if the adapter has no {@link dev.iomap.api.Capability#SYMLINKS},
     *     or for an attribute other than the permissions
     * @throws java.nio.file.ProviderMismatchException if {@code target} is not a path of this provider
     */
    @Override
    public void createSymbolicLink(Path link, Path target, FileAttribute<?>... attrs) throws IOException {
        IomapPath p = IomapPath.of(link);
        p.getFileSystem().createSymbolicLink(p, IomapPath.of(target).toString(), attrs);
    }

    /**
     * Adds a name to an existing file; a symbolic link as {@code existing}'s last name is not followed
     * (the new name is another link to the same target, as Linux's {@code link(2)} does).
     *
     * @throws UnsupportedOperationException if the adapter has no {@link dev.iomap.api.Capability#HARD_LINKS}
     */
    @Override
    public void createLink(Path link, Path existing) throws IOException {
        IomapPath p = IomapPath.of(link);
        IomapPath target = IomapPath.of(existing);
        if (target.getFileSystem() != p.getFileSystem()) {
            throw new java.nio.file.FileSystemException(link.toString(), existing.toString(),
                    "Invalid cross-device link (the two paths are in different iomap file systems)");
        }
        p.getFileSystem().createLink(p, target);
    }

    /**
     * @throws java.nio.file.NotLinkException if {@code link} is not a symbolic link
     * @throws UnsupportedOperationException if the adapter has no {@link dev.iomap.api.Capability#SYMLINKS}
     */
    @Override
    public Path readSymbolicLink(Path link) throws IOException {
        IomapPath p = IomapPath.of(link);
        return p.getFileSystem().readSymbolicLink(p);
    }

    /** Removes the name; a symbolic link is removed itself, not what it points at. */
    @Override
    public void delete(Path path) throws IOException {
        IomapPath p = IomapPath.of(path);
        p.getFileSystem().delete(p);
    }

    /**
     * As {@link CopyMove#copy}: {@code COPY_ATTRIBUTES} copies mode, owner, group, times and
     * {@code user.} extended attributes where both file systems keep them; {@code NOFOLLOW_LINKS}
     * copies a symbolic link as a link.
     */
    @Override
    public void copy(Path source, Path target, CopyOption... options) throws IOException {
        CopyMove.copy(IomapPath.of(source), IomapPath.of(target), options);
    }

    /** As {@link CopyMove#move}: without {@code REPLACE_EXISTING} an atomic no-replace rename. */
    @Override
    public void move(Path source, Path target, CopyOption... options) throws IOException {
        CopyMove.move(IomapPath.of(source), IomapPath.of(target), options);
    }

    /** Follows symbolic links: two paths are the same file if they reach the same inode. */
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

    /**
     * Checks that the file exists, following symbolic links; every access mode is granted (the
     * provider is not the kernel: no permission is checked against this process).
     */
    @Override
    public void checkAccess(Path path, AccessMode... modes) throws IOException {
        IomapPath p = IomapPath.of(path);
        p.getFileSystem().stat(p);
    }

    /**
     * @return the "basic" view; "posix" and "owner" views where the adapter declares
     *     {@link dev.iomap.api.Capability#POSIX_ATTRIBUTES}; the "user" view where it declares
     *     {@link dev.iomap.api.Capability#XATTRS}; null for any other view. {@code NOFOLLOW_LINKS}
     *     makes the view read and change a symbolic link itself.
     */
    @Override
    @SuppressWarnings("unchecked")
    public <V extends FileAttributeView> V getFileAttributeView(Path path, Class<V> type, LinkOption... options) {
        IomapPath p = IomapPath.of(path);
        boolean follow = LinkOptions.follow(options);
        IomapNioFileSystem fs = p.getFileSystem();
        boolean posix = fs.supports(Capability.POSIX_ATTRIBUTES);
        if (type == BasicFileAttributeView.class) {
            return (V) new IomapFileAttributeView(p, follow);
        }
        if (type == PosixFileAttributeView.class && posix) {
            return (V) new IomapPosixFileAttributeView(p, follow);
        }
        if (type == FileOwnerAttributeView.class && posix) {
            return (V) new IomapPosixFileAttributeView.Owner(new IomapPosixFileAttributeView(p, follow));
        }
        if (type == UserDefinedFileAttributeView.class && fs.supports(Capability.XATTRS)) {
            return (V) new IomapUserDefinedFileAttributeView(p, follow);
        }
        return null;
    }

    /**
     * @throws UnsupportedOperationException for a type other than {@link BasicFileAttributes} and (where
     *     the adapter declares {@link dev.iomap.api.Capability#POSIX_ATTRIBUTES})
     *     {@link PosixFileAttributes}
     */
    @Override
    @SuppressWarnings("unchecked")
    public <A extends BasicFileAttributes> A readAttributes(Path path, Class<A> type, LinkOption... options)
            throws IOException {
        IomapPath p = IomapPath.of(path);
        boolean follow = LinkOptions.follow(options);
        boolean posix = p.getFileSystem().supports(Capability.POSIX_ATTRIBUTES);
        if (type != BasicFileAttributes.class && !(type == PosixFileAttributes.class && posix)) {
            throw new UnsupportedOperationException("this iomap file system has no " + type.getSimpleName()
                    + (posix ? "" : " (its adapter does not declare POSIX_ATTRIBUTES)"));
        }
        return (A) p.getFileSystem().readAttributes(p, follow);
    }

    /** As {@link AttributeMaps#read}. */
    @Override
    public Map<String, Object> readAttributes(Path path, String attributes, LinkOption... options)
            throws IOException {
        return AttributeMaps.read(IomapPath.of(path), attributes, LinkOptions.follow(options));
    }

    /** As {@link AttributeMaps#set}. */
    @Override
    public void setAttribute(Path path, String attribute, Object value, LinkOption... options) throws IOException {
        AttributeMaps.set(IomapPath.of(path), attribute, value, LinkOptions.follow(options));
    }
}
