package dev.iomap.core.vfs;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.spi.FilesystemAdapter;
import dev.iomap.api.FsStat;
import dev.iomap.spi.InodeInfo;
import dev.iomap.api.IoStats;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.spi.MountedFilesystem;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.RenameFlag;
import dev.iomap.api.RenameFlags;
import dev.iomap.core.CachedInode;
import dev.iomap.core.IomapCache;
import java.io.IOException;
import java.nio.file.ClosedFileSystemException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@link IomapFileSystem} over an adapter's {@link MountedFilesystem} and one {@link IomapCache}.
 *
 * <p>Namespace operations are serialised by one lock; file data goes through the cache with only
 * inode and folio locks. Inodes stay cached after their files close (their pages are the cache); an
 * inode left with no name is evicted when its last open file closes.
 */
final class CoreFileSystem implements IomapFileSystem {
    private final FilesystemAdapter adapter;
    private final MountedFilesystem mount;
    private final IomapCache cache;
    private final Set<Capability> capabilities;
    private final ReentrantLock namespace = new ReentrantLock();
    private final Map<Long, Integer> openCounts = new HashMap<>();
    private final Map<Long, Boolean> unlinked = new HashMap<>();
    private volatile boolean closed;

    CoreFileSystem(FilesystemAdapter adapter, MountedFilesystem mount, BlockDevice device, MountOptions options) {
        this.adapter = adapter;
        this.mount = mount;
        this.capabilities = Capability.withImplied(adapter.capabilities());
        this.cache = new IomapCache(options.pageCache(), device);
        if (options.backgroundWriteback()) {
            cache.startBackgroundWriteback();
        }
    }

    MountedFilesystem mount() {
        return mount;
    }

    IomapCache cache() {
        return cache;
    }

    @Override
    public String adapterName() {
        return adapter.name();
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    void require(Capability capability, String operation) throws NotSupportedException {
        if (!capabilities.contains(capability)) {
            throw new NotSupportedException(operation + " is not supported by " + adapter.name()
                    + " (it does not declare " + capability + ")");
        }
    }

    void ensureOpen() {
        if (closed) {
            throw new ClosedFileSystemException();
        }
    }

    @Override
    public IomapFile create(String path) throws IOException {
        return locked(() -> {
            Parent parent = parent(path);
            long ino = mount.create(parent.dir(), parent.name(), FileType.REGULAR);
            return openInode(ino);
        });
    }

    @Override
    public IomapFile open(String path) throws IOException {
        return locked(() -> {
            long ino = resolve(path);
            if (mount.getattr(ino).type() == FileType.DIRECTORY) {
                throw new FileSystemException(path, null, "Is a directory");
            }
            return openInode(ino);
        });
    }

    @Override
    public void mkdir(String path) throws IOException {
        require(Capability.DIRECTORIES, "mkdir");
        locked(() -> {
            Parent parent = parent(path);
            return mount.create(parent.dir(), parent.name(), FileType.DIRECTORY);
        });
    }

    @Override
    public List<DirEntry> readdir(String path) throws IOException {
        return locked(() -> {
            long ino = resolve(path);
            if (mount.getattr(ino).type() != FileType.DIRECTORY) {
                throw new NotDirectoryException(path);
            }
            return mount.readdir(ino);
        });
    }

    @Override
    public void unlink(String path) throws IOException {
        locked(() -> {
            Parent parent = parent(path);
            long ino = mount.lookup(parent.dir(), parent.name());
            mount.unlink(parent.dir(), parent.name());
            forgetIfUnlinked(ino);
            return null;
        });
    }

    @Override
    public void rmdir(String path) throws IOException {
        locked(() -> {
            Parent parent = parent(path);
            mount.rmdir(parent.dir(), parent.name());
            return null;
        });
    }

    @Override
    public void rename(String from, String to) throws IOException {
        require(Capability.DIRECTORIES, "rename");
        locked(() -> {
            Parent source = parent(from);
            Parent target = parent(to);
            long orphan = mount.rename(source.dir(), source.name(), target.dir(), target.name());
            if (orphan >= 0) {
                forgetIfUnlinked(orphan);
            }
            return null;
        });
    }

    /**
     * NOREPLACE looks the target up under the namespace lock that serialises every namespace change,
     * so nothing can create it between the check and the rename. EXCHANGE refuses a directory and a
     * name in its own subtree by path (directories have exactly one name) before the adapter sees it.
     */
    @Override
    public void rename(String from, String to, Set<RenameFlag> flags) throws IOException {
        RenameFlags.check(flags);
        if (flags.isEmpty()) {
            rename(from, to);
            return;
        }
        if (flags.contains(RenameFlag.EXCHANGE)) {
            require(Capability.RENAME_EXCHANGE, "rename with EXCHANGE");
            require(Capability.DIRECTORIES, "rename");
            exchange(from, to);
            return;
        }
        require(Capability.DIRECTORIES, "rename");
        locked(() -> {
            Parent source = parent(from);
            Parent target = parent(to);
            mount.lookup(source.dir(), source.name());
            if (exists(target)) {
                throw new FileAlreadyExistsException(to, null, "exists, and rename was asked not to replace it");
            }
            mount.rename(source.dir(), source.name(), target.dir(), target.name());
            return null;
        });
    }

    private void exchange(String from, String to) throws IOException {
        List<String> fromNames = Paths.names(from);
        List<String> toNames = Paths.names(to);
        if (!fromNames.equals(toNames) && (isPrefix(fromNames, toNames) || isPrefix(toNames, fromNames))) {
            throw new IllegalArgumentException("cannot exchange '" + from + "' and '" + to
                    + "': one is inside the other");
        }
        locked(() -> {
            Parent first = parent(from);
            Parent second = parent(to);
            mount.lookup(first.dir(), first.name());
            mount.lookup(second.dir(), second.name());
            if (first.dir() == second.dir() && first.name().equals(second.name())) {
                return null;
            }
            mount.exchange(first.dir(), first.name(), second.dir(), second.name());
            return null;
        });
    }

    private static boolean isPrefix(List<String> prefix, List<String> names) {
        return prefix.size() <= names.size() && names.subList(0, prefix.size()).equals(prefix);
    }

    private boolean exists(Parent parent) throws IOException {
        try {
            mount.lookup(parent.dir(), parent.name());
            return true;
        } catch (NoSuchFileException e) {
            return false;
        }
    }

    @Override
    public FileStat stat(String path) throws IOException {
        return locked(() -> stat(resolve(path)));
    }

    FileStat stat(long ino) throws IOException {
        InodeInfo info = mount.getattr(ino);
        CachedInode cached = cache.inode(ino);
        long size = cached != null ? cached.size() : info.size();
        return new FileStat(ino, info.type(), size, info.allocatedBytes(), info.linkCount(), info.modifiedMillis());
    }

    @Override
    public FsStat statfs() throws IOException {
        ensureOpen();
        return mount.statfs();
    }

    @Override
    public void sync() throws IOException {
        ensureOpen();
        cache.syncAll();
        mount.sync();
    }

    @Override
    public long dropCleanCache() {
        ensureOpen();
        return cache.dropCleanCache();
    }

    @Override
    public IoStats stats() {
        return cache.stats();
    }

    @Override
    public void close() throws IOException {
        namespace.lock();
        try {
            if (closed) {
                return;
            }
            // Order: no background writeback may call the adapter once it has unmounted, so the
            // flusher stops first; then the final sync; then the adapter's unmount. Unmounting
            // releases the mount whatever happens: a failed final sync (a dead device) is reported,
            // but must not leave the cache running.
            closed = true;
            try {
                cache.stopBackgroundWriteback();
                cache.syncAll();
                mount.unmount();
            } finally {
                cache.close();
            }
        } finally {
            namespace.unlock();
        }
    }

    /** Opens an inode: caches it on first use and counts the open file. Caller holds the namespace lock. */
    private IomapFile openInode(long ino) throws IOException {
        CachedInode inode = cache.inode(ino);
        if (inode == null) {
            InodeInfo info = mount.getattr(ino);
            inode = cache.addInode(ino, mount.blockSize(), info.size(), mount.maxFileSize(), mount.iomapOps(),
                    mount.writebackOps());
        }
        openCounts.merge(ino, 1, Integer::sum);
        return new CoreFile(this, inode);
    }

    /** The last close of a file: evict it if it has no name left. */
    void released(long ino) throws IOException {
        namespace.lock();
        try {
            if (openCounts.merge(ino, -1, Integer::sum) == 0) {
                openCounts.remove(ino);
                if (unlinked.remove(ino) != null && !closed) {
                    evict(ino);
                }
            }
        } finally {
            namespace.unlock();
        }
    }

    private void forgetIfUnlinked(long ino) throws IOException {
        if (mount.getattr(ino).linkCount() > 0) {
            return;
        }
        if (openCounts.containsKey(ino)) {
            unlinked.put(ino, Boolean.TRUE);
        } else {
            evict(ino);
        }
    }

    private void evict(long ino) throws IOException {
        cache.removeInode(ino);
        mount.evict(ino);
    }

    private long resolve(String path) throws IOException {
        long ino = mount.rootIno();
        for (String name : Paths.names(path)) {
            ino = mount.lookup(ino, name);
        }
        return ino;
    }

    private Parent parent(String path) throws IOException {
        List<String> names = Paths.names(path);
        if (names.isEmpty()) {
            throw new FileSystemException(path, null, "the root has no parent");
        }
        long dir = mount.rootIno();
        for (String name : names.subList(0, names.size() - 1)) {
            dir = mount.lookup(dir, name);
        }
        if (mount.getattr(dir).type() != FileType.DIRECTORY) {
            throw new NotDirectoryException(path);
        }
        return new Parent(dir, names.getLast());
    }

    private record Parent(long dir, String name) {
    }

    private <T> T locked(NamespaceAction<T> action) throws IOException {
        namespace.lock();
        try {
            ensureOpen();
            return action.run();
        } finally {
            namespace.unlock();
        }
    }

    @FunctionalInterface
    private interface NamespaceAction<T> {
        T run() throws IOException;
    }
}
