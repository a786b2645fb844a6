package dev.iomap.testkit;

import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.XattrMode;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsStat;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.FileOps;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.SuperOps;
import dev.iomap.spi.WritebackOps;
import dev.iomap.spi.XattrOps;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A test double around any adapter, for tests of an engine: it records the calls the engine makes
 * around its page cache, in the order they reach the adapter, and can run an action just before
 * one of them. Everything else (format, fsck, namespace, attributes, mappings, writeback) passes
 * straight through, unrecorded.
 *
 * <p>Recorded calls, one string each: {@code setSize INO SIZE}, {@code fallocate MODE OFFSET LENGTH},
 * {@code cloneRange SOURCE_INO SOURCE_OFFSET TARGET_INO TARGET_OFFSET LENGTH}, {@code fsync INO},
 * {@code fdatasync INO}, {@code evict INO}, {@code sync}, {@code unmount}. A call is recorded when it
 * reaches the wrapped adapter, whether or not the adapter then fails it. One record covers every
 * mount made through this instance.
 *
 * <p>Thread-safe: calls may come from any thread. Unlike a real adapter it holds state (the record),
 * so use one instance per test.
 */
public final class RecordingAdapter implements FileSystemAdapter {
    private final FileSystemAdapter adapter;
    private final Set<Capability> capabilities;
    private final List<String> calls;
    private final Map<String, Runnable> before;

    /**
     * Records the calls made to {@code adapter}, declaring what it declares.
     *
     * @param adapter the adapter to wrap
     */
    public RecordingAdapter(FileSystemAdapter adapter) {
        this(adapter, adapter.capabilities());
    }

    private RecordingAdapter(FileSystemAdapter adapter, Set<Capability> capabilities) {
        this(adapter, capabilities, Collections.synchronizedList(new ArrayList<>()), new ConcurrentHashMap<>());
    }

    private RecordingAdapter(FileSystemAdapter adapter, Set<Capability> capabilities, List<String> calls,
            Map<String, Runnable> before) {
        this.adapter = adapter;
        this.capabilities = capabilities;
        this.calls = calls;
        this.before = before;
    }

    /**
     * A recorder that declares {@code declared} instead of what the wrapped adapter declares, so that an
     * engine test gets past the engine's capability check to the engine's own argument checks of an
     * operation the adapter lacks (if such a call does reach the adapter, the adapter fails it, as a
     * rule with the SPI's default {@code NotSupportedException}). The new recorder shares nothing with
     * this one.
     *
     * @param declared the capabilities to declare
     * @return a new recorder around the same adapter
     */
    public RecordingAdapter declaring(Set<Capability> declared) {
        EnumSet<Capability> copy = EnumSet.noneOf(Capability.class);
        copy.addAll(declared);
        return new RecordingAdapter(adapter, Collections.unmodifiableSet(copy));
    }

    /** @return the calls recorded so far, oldest first (a copy) */
    public List<String> calls() {
        synchronized (calls) {
            return List.copyOf(calls);
        }
    }

    /**
     * Runs {@code action} on the calling thread every time the call named {@code call} is about to
     * reach the wrapped adapter, after it is recorded; an exception from the action fails that call.
     * A later action for the same call replaces this one.
     *
     * @param call the call's name, the first word of its record ({@code unmount}, {@code fsync},
     *     {@code setSize}...)
     * @param action what to run
     */
    public void beforeCall(String call, Runnable action) {
        before.put(call, action);
    }

    private void record(String call, Object... arguments) {
        StringBuilder line = new StringBuilder(call);
        for (Object argument : arguments) {
            line.append(' ').append(argument);
        }
        calls.add(line.toString());
        Runnable action = before.get(call);
        if (action != null) {
            action.run();
        }
    }

    /** @return the wrapped adapter's name */
    @Override
    public String name() {
        return adapter.name();
    }

    /** @return the wrapped adapter's description */
    @Override
    public String description() {
        return adapter.description();
    }

    /** @return the wrapped adapter's capabilities, or those given to {@link #declaring} */
    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    /** Formats with the wrapped adapter; not recorded. */
    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        adapter.format(device, options);
    }

    /** Checks the format with the wrapped adapter; not recorded. */
    @Override
    public void checkFormat(int deviceBlockSize, long capacity, FormatOptions options) throws IOException {
        adapter.checkFormat(deviceBlockSize, capacity, options);
    }

    /** Checks a zoned format with the wrapped adapter; not recorded. */
    @Override
    public void checkFormat(int deviceBlockSize, java.util.List<dev.iomap.device.Zone> zones, FormatOptions options)
            throws IOException {
        adapter.checkFormat(deviceBlockSize, zones, options);
    }

    /** Mounts with the wrapped adapter; the returned mount records its calls here. */
    @Override
    public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
        return new RecordingMount(adapter.mount(device, options));
    }

    /** Checks with the wrapped adapter; not recorded. */
    @Override
    public FsckReport fsck(BlockDevice device) throws IOException {
        return adapter.fsck(device);
    }

    /** Passes on. */
    @Override
    public boolean needsRecovery(BlockDevice device) throws IOException {
        return adapter.needsRecovery(device);
    }

    /** Checks with the wrapped adapter and options; not recorded. */
    @Override
    public FsckReport fsck(BlockDevice device, dev.iomap.api.FsckOptions options) throws IOException {
        return adapter.fsck(device, options);
    }

    /** @return whether the wrapped adapter needs a zoned device */
    @Override
    public boolean requiresZonedDevice() {
        return adapter.requiresZonedDevice();
    }

    /** Probes with the wrapped adapter; not recorded. */
    @Override
    public boolean probe(BlockDevice device) throws IOException {
        return adapter.probe(device);
    }

    /** Probes with the wrapped adapter; not recorded. */
    @Override
    public java.util.Optional<dev.iomap.spi.ProbedFormat> probeFormat(BlockDevice device) throws IOException {
        return adapter.probeFormat(device);
    }

    /**
     * The wrapped adapter's cluster node, recorded into this recorder's record (its mounts' calls join
     * this record, and {@link #beforeCall} actions apply to them).
     */
    @Override
    public FileSystemAdapter clusterNode(dev.iomap.spi.lock.ClusterJoin join)
            throws dev.iomap.api.NotSupportedException {
        return new RecordingAdapter(adapter.clusterNode(join), capabilities, calls, before);
    }

    /**
     * Passes every call of every table on, including the SPI's default methods, and records the cache
     * hooks. It is its own table of each kind, over the wrapped mount's tables.
     */
    private final class RecordingMount implements MountedFileSystem, SuperOps, InodeOps, FileOps, XattrOps {
        private final MountedFileSystem mount;

        RecordingMount(MountedFileSystem mount) {
            this.mount = mount;
        }

        @Override
        public int blockSize() {
            return mount.blockSize();
        }

        @Override
        public long rootIno() {
            return mount.rootIno();
        }

        @Override
        public long maxFileSize() {
            return mount.maxFileSize();
        }

        @Override
        public dev.iomap.api.AtomicWriteLimits atomicWriteLimits() {
            return mount.atomicWriteLimits();
        }

        @Override
        public FileStat getattr(long ino) throws IOException {
            return mount.inodeOps().getattr(ino);
        }

        @Override
        public long lookup(long dirIno, String name) throws IOException {
            return mount.inodeOps().lookup(dirIno, name);
        }

        @Override
        public long create(long dirIno, String name, FileType type) throws IOException {
            return mount.inodeOps().create(dirIno, name, type);
        }

        @Override
        public List<DirEntry> readdir(long dirIno) throws IOException {
            return mount.inodeOps().readdir(dirIno);
        }

        @Override
        public void unlink(long dirIno, String name) throws IOException {
            mount.inodeOps().unlink(dirIno, name);
        }

        @Override
        public void rmdir(long dirIno, String name) throws IOException {
            mount.inodeOps().rmdir(dirIno, name);
        }

        @Override
        public long rename(long fromDir, String fromName, long toDir, String toName) throws IOException {
            return mount.inodeOps().rename(fromDir, fromName, toDir, toName);
        }

        @Override
        public void exchange(long dir1, String name1, long dir2, String name2) throws IOException {
            mount.inodeOps().exchange(dir1, name1, dir2, name2);
        }

        @Override
        public long create(long dirIno, String name, FileType type, NewInodeAttributes attributes)
                throws IOException {
            return mount.inodeOps().create(dirIno, name, type, attributes);
        }

        @Override
        public long symlink(long dirIno, String name, byte[] target, NewInodeAttributes attributes)
                throws IOException {
            return mount.inodeOps().symlink(dirIno, name, target, attributes);
        }

        @Override
        public long mknod(long dirIno, String name, FileType type, long rdev, NewInodeAttributes attributes)
                throws IOException {
            return mount.inodeOps().mknod(dirIno, name, type, rdev, attributes);
        }

        @Override
        public long renameWhiteout(long fromDir, String fromName, long toDir, String toName,
                NewInodeAttributes whiteout) throws IOException {
            return mount.inodeOps().renameWhiteout(fromDir, fromName, toDir, toName, whiteout);
        }

        @Override
        public byte[] readlink(long ino) throws IOException {
            return mount.inodeOps().readlink(ino);
        }

        @Override
        public void link(long ino, long dirIno, String name) throws IOException {
            mount.inodeOps().link(ino, dirIno, name);
        }

        @Override
        public FileStat setattr(long ino, AttributeChange change) throws IOException {
            return mount.inodeOps().setattr(ino, change);
        }

        @Override
        public void updateTimes(IomapInode inode, Instant now) throws IOException {
            mount.inodeOps().updateTimes(inode, now);
        }

        @Override
        public byte[] getxattr(long ino, String name) throws IOException {
            return mount.xattrOps().getxattr(ino, name);
        }

        @Override
        public List<String> listxattr(long ino) throws IOException {
            return mount.xattrOps().listxattr(ino);
        }

        @Override
        public void setxattr(long ino, String name, byte[] value, XattrMode mode) throws IOException {
            mount.xattrOps().setxattr(ino, name, value, mode);
        }

        @Override
        public void removexattr(long ino, String name) throws IOException {
            mount.xattrOps().removexattr(ino, name);
        }

        @Override
        public java.util.Set<dev.iomap.api.FileFlag> getflags(long ino) throws IOException {
            return mount.inodeOps().getflags(ino);
        }

        @Override
        public void setflags(long ino, java.util.Optional<IomapInode> cached, java.util.Set<dev.iomap.api.FileFlag> flags)
                throws IOException {
            record("setflags", ino);
            mount.inodeOps().setflags(ino, cached, flags);
        }

        @Override
        public java.util.Map<String, Long> counters() {
            return mount.superOps().counters();
        }

        @Override
        public FsStat statfs() throws IOException {
            return mount.superOps().statfs();
        }

        @Override
        public SuperOps superOps() {
            return this;
        }

        @Override
        public InodeOps inodeOps() {
            return this;
        }

        @Override
        public FileOps fileOps() {
            return this;
        }

        @Override
        public XattrOps xattrOps() {
            return this;
        }

        @Override
        public IomapOps iomapOps() {
            return mount.iomapOps();
        }

        @Override
        public WritebackOps writebackOps() {
            return mount.writebackOps();
        }

        @Override
        public void checkSetSize(IomapInode inode, long newSize) throws IOException {
            mount.fileOps().checkSetSize(inode, newSize);
        }

        @Override
        public void setSize(IomapInode inode, long newSize) throws IOException {
            record("setSize", inode.ino(), newSize);
            mount.fileOps().setSize(inode, newSize);
        }

        @Override
        public void fallocate(IomapInode inode, FallocateMode mode, long offset, long length) throws IOException {
            record("fallocate", mode, offset, length);
            mount.fileOps().fallocate(inode, mode, offset, length);
        }

        @Override
        public void cloneRange(IomapInode source, long srcOffset, IomapInode target, long dstOffset, long length)
                throws IOException {
            record("cloneRange", source.ino(), srcOffset, target.ino(), dstOffset, length);
            mount.fileOps().cloneRange(source, srcOffset, target, dstOffset, length);
        }

        @Override
        public void fsync(IomapInode inode, boolean dataOnly) throws IOException {
            record(dataOnly ? "fdatasync" : "fsync", inode.ino());
            mount.fileOps().fsync(inode, dataOnly);
        }

        @Override
        public void release(IomapInode inode) throws IOException {
            mount.fileOps().release(inode);
        }

        @Override
        public void open(IomapInode inode) throws IOException {
            mount.fileOps().open(inode);
        }

        @Override
        public boolean dropInode(IomapInode inode) {
            return mount.superOps().dropInode(inode);
        }

        @Override
        public java.util.Optional<java.util.UUID> uuid() throws IOException {
            return mount.superOps().uuid();
        }

        @Override
        public String label() throws IOException {
            return mount.superOps().label();
        }

        @Override
        public void setLabel(String label) throws IOException {
            record("setLabel", label);
            mount.superOps().setLabel(label);
        }

        @Override
        public long trim(long start, long length, long minLength) throws IOException {
            record("trim", start, length, minLength);
            return mount.superOps().trim(start, length, minLength);
        }

        @Override
        public FileUse use(IomapInode inode, boolean write) throws IOException {
            return mount.fileOps().use(inode, write);
        }

        @Override
        public void evict(long ino) throws IOException {
            record("evict", ino);
            mount.superOps().evict(ino);
        }

        @Override
        public void sync() throws IOException {
            record("sync");
            mount.superOps().sync();
        }

        @Override
        public void unmount() throws IOException {
            record("unmount");
            mount.superOps().unmount();
        }
    }
}
