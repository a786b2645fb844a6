package dev.iomap.nio;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.FileStat;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
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
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.ArrayList;
import java.util.List;
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
    private final Set<IomapFileChannel> channels = ConcurrentHashMap.newKeySet();
    private volatile boolean open = true;

    IomapNioFileSystem(IomapFileSystemProvider provider, ImageUri uri, IomapFileSystem iomap, BlockDevice device) {
        this.provider = provider;
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
        provider.forget(uri.image());
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

    @Override
    public Set<String> supportedFileAttributeViews() {
        return Set.of("basic");
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

    @Override
    public UserPrincipalLookupService getUserPrincipalLookupService() {
        throw new UnsupportedOperationException("iomap file systems have no users or groups");
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

    IomapFileAttributes readAttributes(IomapPath path) throws IOException {
        ensureOpen();
        return new IomapFileAttributes(iomap.stat(path.fsPath()));
    }

    FileStat stat(IomapPath path) throws IOException {
        ensureOpen();
        return iomap.stat(path.fsPath());
    }

    /** Opens (creating or truncating as the flags say) a channel on a regular file. */
    IomapFileChannel newChannel(IomapPath path, OpenFlags flags) throws IOException {
        ensureOpen();
        String name = path.fsPath();
        IomapFile file = openFile(name, flags);
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

    private IomapFile openFile(String name, OpenFlags flags) throws IOException {
        if (flags.createNew()) {
            return iomap.create(name);
        }
        if (!flags.create()) {
            return iomap.open(name);
        }
        try {
            return iomap.open(name);
        } catch (NoSuchFileException missing) {
            try {
                return iomap.create(name);
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

    void createDirectory(IomapPath dir) throws IOException {
        ensureOpen();
        iomap.mkdir(dir.fsPath());
    }

    void delete(IomapPath path) throws IOException {
        ensureOpen();
        String name = path.fsPath();
        if (iomap.stat(name).isDirectory()) {
            iomap.rmdir(name);
        } else {
            iomap.unlink(name);
        }
    }
}
