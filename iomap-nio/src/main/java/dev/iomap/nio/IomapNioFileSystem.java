package dev.iomap.nio;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.SymlinkLoopException;
import java.io.IOException;
import java.nio.file.ClosedFileSystemException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileStore;
import java.nio.file.FileSystem;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.WatchService;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link FileSystem} over a mounted {@link IomapFileSystem} whose image is a file. Closing it
 * closes its open channels, unmounts (leaving a clean image) and closes the image.
 *
 * <p>Thread-safe. After {@link #close()} every operation on it or its paths throws
 * {@link ClosedFileSystemException}.
 */
final class IomapNioFileSystem extends FileSystem {
    private final IomapFileSystemProvider provider;
    private final ImageUri uri;
    private final IomapFileSystem iomap;
    private final BlockDevice device;
    private final IomapPath root;
    private final IomapFileStore store;
    private final IomapUserPrincipalLookupService names;
    private final Set<IomapFileChannel> channels = ConcurrentHashMap.newKeySet();
    private volatile boolean open = true;

    IomapNioFileSystem(IomapFileSystemProvider provider, ImageUri uri, IomapFileSystem iomap, BlockDevice device) {
        this(provider, uri, iomap, device, IomapUserPrincipalLookupService.SYSTEM);
    }

    /**
     * @param provider the provider that opened it
     * @param uri the image's URI
     * @param iomap the mounted file system, unmounted by {@link #close()}
     * @param device the image, closed by {@link #close()}
     * @param names names users and groups
     */
    IomapNioFileSystem(IomapFileSystemProvider provider, ImageUri uri, IomapFileSystem iomap, BlockDevice device,
            IomapUserPrincipalLookupService names) {
        this.provider = provider;
        this.names = names;
        this.uri = uri;
        this.iomap = iomap;
        this.device = device;
        this.root = new IomapPath(this, "/");
        this.store = new IomapFileStore(this);
    }

    ImageUri imageUri() {
        return uri;
    }

    /** @return the mounted file system behind this one */
    IomapFileSystem iomap() {
        return iomap;
    }

    void ensureOpen() {
        if (!open) {
            throw new ClosedFileSystemException();
        }
    }

    @Override
    public IomapFileSystemProvider provider() {
        return provider;
    }

    @Override
    public void close() throws IOException {
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
        }
        provider.forget(uri.location());
        IOException failure = null;
        for (IomapFileChannel channel : List.copyOf(channels)) {
            try {
                channel.close();
            } catch (IOException e) {
                failure = e;
            }
        }
        try (device) {
            iomap.close();
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean isReadOnly() {
        return false;
    }

    @Override
    public String getSeparator() {
        return "/";
    }

    @Override
    public Iterable<Path> getRootDirectories() {
        return List.of(root);
    }

    @Override
    public Iterable<FileStore> getFileStores() {
        return List.of(store);
    }

    FileStore fileStore() {
        return store;
    }

    /**
     * @return "basic"; with {@link Capability#POSIX_ATTRIBUTES} also "posix", "unix" and "owner"; with
     *     {@link Capability#XATTRS} also "user"
     */
    @Override
    public Set<String> supportedFileAttributeViews() {
        Set<String> views = new LinkedHashSet<>();
        views.add("basic");
        if (supports(Capability.POSIX_ATTRIBUTES)) {
            views.addAll(List.of("posix", "unix", "owner"));
        }
        if (supports(Capability.XATTRS)) {
            views.add("user");
        }
        return Collections.unmodifiableSet(views);
    }

    /**
     * @param capability what the adapter may do
     * @return whether it declares it
     */
    boolean supports(Capability capability) {
        return iomap.capabilities().contains(capability);
    }

    @Override
    public Path getPath(String first, String... more) {
        if (more.length == 0) {
            return new IomapPath(this, first);
        }
        var joined = new StringBuilder(first);
        for (String part : more) {
            if (!part.isEmpty()) {
                if (!joined.isEmpty()) {
                    joined.append('/');
                }
                joined.append(part);
            }
        }
        return new IomapPath(this, joined.toString());
    }

    @Override
    public PathMatcher getPathMatcher(String syntaxAndPattern) {
        return Globs.matcher(syntaxAndPattern);
    }

    /**
     * @return names for the numeric owners and groups files keep, from this machine's
     *     {@code /etc/passwd} and {@code /etc/group}
     * @throws UnsupportedOperationException if the adapter keeps no owners
     *     ({@link Capability#POSIX_ATTRIBUTES})
     */
    @Override
    public UserPrincipalLookupService getUserPrincipalLookupService() {
        if (!supports(Capability.POSIX_ATTRIBUTES)) {
            throw new UnsupportedOperationException("this iomap file system keeps no owners or groups (its adapter "
                    + iomap.adapterName() + " does not declare POSIX_ATTRIBUTES)");
        }
        return names;
    }

    @Override
    public WatchService newWatchService() {
        throw new UnsupportedOperationException("iomap file systems have no watch service");
    }

    @Override
    public String toString() {
        return uri.fileSystemUri().toString();
    }

    // ---- operations the provider delegates here ------------------------------------------------

    /**
     * @param path a path
     * @param follow whether a symbolic link as the last name is followed ({@code stat}) or not
     *     ({@code lstat}); without {@link Capability#SYMLINKS} the two are the same
     * @return what the file system says of it
     */
    FileStat stat(IomapPath path, boolean follow) throws IOException {
        ensureOpen();
        String name = path.fsPath();
        return follow || !supports(Capability.SYMLINKS) ? iomap.stat(name) : iomap.lstat(name);
    }

    /** @return {@link #stat(IomapPath, boolean)} following links: what {@code path} names */
    FileStat stat(IomapPath path) throws IOException {
        return stat(path, true);
    }

    IomapFileAttributes readAttributes(IomapPath path, boolean follow) throws IOException {
        return new IomapFileAttributes(stat(path, follow), names);
    }

    /**
     * @param path a path
     * @param follow whether a symbolic link as the last name is followed
     * @return the name the file system's {@code l}-calls take for it: with {@code follow}, every link
     *     resolved ({@link IomapFileSystem#realPath}); without, the path itself
     * @throws java.nio.file.NoSuchFileException if following, and the path or a link's target is missing
     */
    String target(IomapPath path, boolean follow) throws IOException {
        ensureOpen();
        String name = path.fsPath();
        return follow && supports(Capability.SYMLINKS) ? iomap.realPath(name) : name;
    }

    /**
     * Changes mode, owner, group or times ({@link IomapFileSystem#setAttributes}).
     *
     * @throws UnsupportedOperationException if the adapter keeps no such attributes
     */
    void setAttributes(IomapPath path, boolean follow, AttributeChange change) throws IOException {
        requireForView(Capability.POSIX_ATTRIBUTES, "setting mode, owner, group or times");
        iomap.setAttributes(target(path, follow), change);
    }

    /**
     * @throws UnsupportedOperationException naming {@code what}, if the adapter lacks {@code capability}
     */
    void requireForView(Capability capability, String what) {
        if (!supports(capability)) {
            throw new UnsupportedOperationException(what + " is not supported by this iomap file system (its adapter "
                    + iomap.adapterName() + " does not declare " + capability + ")");
        }
    }

    /**
     * @param path a path
     * @param follow whether symbolic links are resolved ({@link IomapFileSystem#realPath}), or the
     *     path is only made absolute and normalized (and must exist, as a link or not)
     * @return the real path
     */
    IomapPath realPath(IomapPath path, boolean follow) throws IOException {
        if (follow) {
            String real = target(path, true);
            if (!supports(Capability.SYMLINKS)) {
                iomap.stat(real);
            }
            return new IomapPath(this, real);
        }
        stat(path, false);
        return new IomapPath(this, path.fsPath());
    }

    /**
     * {@code Files.createSymbolicLink}: the target is kept as its string. Permissions among the
     * attributes are ignored (a link's mode is always {@code 0777}); any other attribute is refused.
     *
     * @throws UnsupportedOperationException without {@link Capability#SYMLINKS}
     */
    void createSymbolicLink(IomapPath link, String target, FileAttribute<?>[] attributes) throws IOException {
        ensureOpen();
        requireForView(Capability.SYMLINKS, "symbolic links");
        // checked, then ignored: a link's mode is always 0777, whatever is asked (as Linux does)
        InitialAttributes.mode(attributes, true);
        iomap.createSymbolicLink(link.fsPath(), target, NewInodeAttributes.defaults(FileType.SYMLINK));
    }

    /** @throws UnsupportedOperationException without {@link Capability#SYMLINKS} */
    IomapPath readSymbolicLink(IomapPath link) throws IOException {
        ensureOpen();
        requireForView(Capability.SYMLINKS, "symbolic links");
        return new IomapPath(this, iomap.readSymbolicLink(link.fsPath()));
    }

    /** @throws UnsupportedOperationException without {@link Capability#HARD_LINKS} */
    void createLink(IomapPath link, IomapPath existing) throws IOException {
        ensureOpen();
        requireForView(Capability.HARD_LINKS, "hard links");
        iomap.createLink(link.fsPath(), existing.fsPath());
    }

    /** Opens (creating or truncating as the flags say) a channel on a regular file. */
    IomapFileChannel newChannel(IomapPath path, OpenFlags flags, FileAttribute<?>[] attributes) throws IOException {
        ensureOpen();
        String name = path.fsPath();
        NewInodeAttributes created = newInode(FileType.REGULAR, attributes);
        if (flags.noFollowLinks()) {
            refuseLink(path);
        }
        IomapFile file = openFile(name, flags, created);
        try {
            if (flags.truncateExisting() && file.size() > 0) {
                file.truncate(0);
            }
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
        var channel = new IomapFileChannel(file, flags, closed -> {
            channels.remove(closed);
            if (flags.deleteOnClose() && open) {
                try {
                    iomap.unlink(name);
                } catch (NoSuchFileException gone) {
                    // already deleted by someone else: nothing to do
                }
            }
        });
        channels.add(channel);
        return channel;
    }

    /**
     * {@code O_NOFOLLOW}: a symbolic link as the last name is refused with ELOOP, as Linux does. Checked
     * before opening, so a link put in the name's place in between is followed.
     */
    private void refuseLink(IomapPath path) throws IOException {
        try {
            if (stat(path, false).isSymbolicLink()) {
                throw new SymlinkLoopException(path.toString());
            }
        } catch (NoSuchFileException missing) {
            // nothing there: opening or creating decides
        }
    }

    /**
     * @return what a file or directory created with {@code attributes} starts with: the permissions
     *     asked for, owned by this process's user and group; null if no permissions were asked for (the
     *     file system's defaults then apply)
     */
    private NewInodeAttributes newInode(FileType type, FileAttribute<?>[] attributes) {
        OptionalInt mode = InitialAttributes.mode(attributes, supports(Capability.POSIX_ATTRIBUTES));
        if (mode.isEmpty()) {
            return null;
        }
        NewInodeAttributes defaults = NewInodeAttributes.defaults(type);
        return new NewInodeAttributes(mode.getAsInt(), defaults.uid(), defaults.gid());
    }

    private IomapFile create(String name, NewInodeAttributes attributes) throws IOException {
        return attributes == null ? iomap.create(name) : iomap.create(name, attributes);
    }

    /**
     * Opens as {@code flags} say: {@code DIRECT} as a {@link dev.iomap.api.OpenFlag#DIRECT} open,
     * {@code APPEND} as an {@link dev.iomap.api.OpenFlag#APPEND} one (each write lands at the end the
     * filesystem knows when it runs, also against other channels and cluster nodes), an open for reading
     * alone of an existing file as a {@link dev.iomap.api.OpenFlag#READ_ONLY} one (an immutable file opens).
     */
    private IomapFile openFile(String name, OpenFlags flags, NewInodeAttributes created) throws IOException {
        var wanted = java.util.EnumSet.noneOf(dev.iomap.api.OpenFlag.class);
        if (flags.direct()) {
            if (!supports(Capability.DIRECT_IO)) {
                throw new UnsupportedOperationException("open option DIRECT is not supported by "
                        + iomap.adapterName() + " (it does not declare DIRECT_IO)");
            }
            wanted.add(dev.iomap.api.OpenFlag.DIRECT);
        }
        if (flags.append()) {
            wanted.add(dev.iomap.api.OpenFlag.APPEND);
        }
        if (wanted.isEmpty()) {
            if (!flags.write() && !flags.create() && !flags.createNew()) {
                return iomap.open(name, java.util.Set.of(dev.iomap.api.OpenFlag.READ_ONLY));
            }
            return openPlain(name, flags, created);
        }
        // Created (or found) as usual, then opened again with the flags.
        try (IomapFile _ = openPlain(name, flags, created)) {
            return iomap.open(name, wanted);
        }
    }

    private IomapFile openPlain(String name, OpenFlags flags, NewInodeAttributes created) throws IOException {
        if (flags.createNew()) {
            return create(name, created);
        }
        if (!flags.create()) {
            return iomap.open(name);
        }
        try {
            return iomap.open(name);
        } catch (NoSuchFileException missing) {
            String target = supports(Capability.SYMLINKS) && !flags.noFollowLinks()
                    ? DanglingLinks.createTarget(iomap, name) : name;
            try {
                return create(target, created);
            } catch (java.nio.file.FileAlreadyExistsException raced) {
                return iomap.open(name);
            }
        }
    }

    DirectoryStream<Path> newDirectoryStream(IomapPath dir, DirectoryStream.Filter<? super Path> filter)
            throws IOException {
        ensureOpen();
        String name = dir.fsPath();
        if (!iomap.stat(name).isDirectory()) {
            throw new NotDirectoryException(dir.toString());
        }
        return new IomapDirectoryStream(dir, new ArrayList<>(iomap.readdir(name)), filter);
    }

    void createDirectory(IomapPath dir, FileAttribute<?>[] attributes) throws IOException {
        ensureOpen();
        NewInodeAttributes created = newInode(FileType.DIRECTORY, attributes);
        if (created == null) {
            iomap.mkdir(dir.fsPath());
        } else {
            iomap.mkdir(dir.fsPath(), created);
        }
    }

    /** Removes the name: a symbolic link itself, not what it points at. */
    void delete(IomapPath path) throws IOException {
        String name = path.fsPath();
        if (stat(path, false).isDirectory()) {
            iomap.rmdir(name);
        } else {
            iomap.unlink(name);
        }
    }
}
