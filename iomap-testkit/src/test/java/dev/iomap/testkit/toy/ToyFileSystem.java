package dev.iomap.testkit.toy;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.device.DeviceStats;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileExtent;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.IoPurpose;
import dev.iomap.api.IoStats;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MappedFile;
import dev.iomap.api.NotSupportedException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A filesystem small enough to trust, for testing the kit itself: no page cache, files are byte
 * arrays, and fsync, sync and unmount write the whole filesystem as one blob at device offset 0 and
 * flush. Bugs can be switched on, so the tests can prove the kit catches them. Root directory only.
 * Its files have no holes ({@link Capability#DENSE_FILES}, which a fixture may declare or not): a file's
 * bytes lie whole in the blob, so its extent report is one extent at the blob's copy once that is
 * written, a delayed one before.
 */
public final class ToyFileSystem implements IomapFileSystem {
    static final int MAGIC = 0x70794673;
    /** What the toy declares unless a fixture gives it other capabilities. */
    public static final Set<Capability> CAPABILITIES = EnumSet.of(Capability.TRUNCATE, Capability.RANDOM_WRITE,
            Capability.DURABLE_FSYNC, Capability.FALLOCATE, Capability.PUNCH_HOLE, Capability.ZERO_RANGE);
    private static final int PAGE = 4096;

    /** Bugs to plant. */
    public enum Bug {
        /** Truncate down keeps the old bytes past the new size, so growing again shows them. */
        TRUNCATE_KEEPS_TAIL,
        /** fsync writes the blob but never flushes the device. */
        FSYNC_WITHOUT_FLUSH,
        /** Seek hole answers the offset itself: a hole reported over data. */
        SEEK_HOLE_AT_OFFSET
    }

    private static final class Data {
        byte[] bytes = new byte[0];
        long size;
        long ino;
        /** Device byte address of the file's first byte in the blob last written or read; -1 if none. */
        long address = -1;
        /** Whether the file changed since the blob was last written. */
        boolean dirty = true;
    }

    private final BlockDevice device;
    private final Set<Bug> bugs;
    private final Set<Capability> capabilities;
    private final Map<String, Data> files = new TreeMap<>();
    private long nextIno = 2;
    private boolean closed;

    private ToyFileSystem(BlockDevice device, Set<Bug> bugs, Set<Capability> capabilities) {
        this.device = device;
        this.bugs = bugs;
        this.capabilities = Set.copyOf(capabilities);
    }

    static void format(BlockDevice device) throws IOException {
        new ToyFileSystem(device, Set.of(), CAPABILITIES).persist(true);
    }

    /**
     * @param device a formatted device
     * @param bugs bugs to plant
     * @return the mounted filesystem
     * @throws IOException if the image is not one
     */
    public static ToyFileSystem mount(BlockDevice device, Set<Bug> bugs) throws IOException {
        return mount(device, bugs, CAPABILITIES);
    }

    /**
     * @param device a formatted device
     * @param bugs bugs to plant
     * @param capabilities what the mount declares
     * @return the mounted filesystem
     * @throws IOException if the image is not one
     */
    public static ToyFileSystem mount(BlockDevice device, Set<Bug> bugs, Set<Capability> capabilities)
            throws IOException {
        ToyFileSystem fs = new ToyFileSystem(device, bugs, capabilities);
        fs.load();
        return fs;
    }

    private synchronized void persist(boolean flush) throws IOException {
        ByteArrayOutputStream payload = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(payload)) {
            out.writeInt(MAGIC);
            out.writeLong(nextIno);
            out.writeInt(files.size());
            for (Map.Entry<String, Data> entry : files.entrySet()) {
                Data data = entry.getValue();
                out.writeUTF(entry.getKey());
                out.writeLong(data.ino);
                out.writeInt((int) data.size);
                // The file's bytes start on a page of the device, so its extent report can be read back.
                int pad = (PAGE - (4 + out.size() + 4) % PAGE) % PAGE;
                out.writeInt(pad);
                out.write(new byte[pad]);
                data.address = 4L + out.size();
                data.dirty = false;
                out.write(data.bytes, 0, (int) data.size);
            }
        }
        byte[] bytes = payload.toByteArray();
        int block = device.blockSize();
        ByteBuffer image = ByteBuffer.allocate((4 + bytes.length + block - 1) / block * block);
        image.putInt(bytes.length).put(bytes).rewind();
        device.write(0, image, IoPurpose.METADATA).join();
        if (flush) {
            device.flush();
        }
    }

    private void load() throws IOException {
        ByteBuffer head = ByteBuffer.allocate(device.blockSize());
        device.read(0, head);
        int length = head.getInt(0);
        if (length <= 0 || length > device.capacity() - 4) {
            throw new CorruptFileSystemException("toy: no filesystem at offset 0");
        }
        int block = device.blockSize();
        ByteBuffer all = ByteBuffer.allocate((4 + length + block - 1) / block * block);
        device.read(0, all);
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(all.array(), 4, length))) {
            if (in.readInt() != MAGIC) {
                throw new CorruptFileSystemException("toy: bad magic");
            }
            nextIno = in.readLong();
            int count = in.readInt();
            for (int i = 0; i < count; i++) {
                Data data = new Data();
                String name = in.readUTF();
                data.ino = in.readLong();
                data.size = in.readInt();
                in.skipNBytes(in.readInt());
                data.address = 4L + length - in.available();
                data.dirty = false;
                data.bytes = in.readNBytes((int) data.size);
                files.put(name, data);
            }
        }
    }

    private static String name(String path) {
        if (!path.startsWith("/") || path.length() < 2 || path.indexOf('/', 1) >= 0) {
            throw new java.nio.file.InvalidPathException(path, "toy paths are /name");
        }
        return path.substring(1);
    }

    @Override
    public String adapterName() {
        return "toy";
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public synchronized IomapFile create(String path) throws IOException {
        String name = name(path);
        if (files.containsKey(name)) {
            throw new FileAlreadyExistsException(path);
        }
        Data data = new Data();
        data.ino = nextIno++;
        files.put(name, data);
        return new ToyFile(data);
    }

    @Override
    public synchronized IomapFile open(String path) throws IOException {
        Data data = files.get(name(path));
        if (data == null) {
            throw new NoSuchFileException(path);
        }
        return new ToyFile(data);
    }

    @Override
    public void mkdir(String path) throws IOException {
        throw new NotSupportedException("toy has no directories (DIRECTORIES)");
    }

    @Override
    public synchronized List<DirEntry> readdir(String path) {
        List<DirEntry> entries = new ArrayList<>();
        files.forEach((name, data) -> entries.add(new DirEntry(name, data.ino, FileType.REGULAR)));
        return entries;
    }

    @Override
    public synchronized void unlink(String path) throws IOException {
        if (files.remove(name(path)) == null) {
            throw new NoSuchFileException(path);
        }
    }

    @Override
    public void rmdir(String path) throws IOException {
        throw new NotSupportedException("toy has no directories (DIRECTORIES)");
    }

    @Override
    public void rename(String from, String to) throws IOException {
        throw new NotSupportedException("toy has no rename (DIRECTORIES)");
    }

    @Override
    public synchronized FileStat stat(String path) throws IOException {
        Data data = files.get(name(path));
        if (data == null) {
            throw new NoSuchFileException(path);
        }
        return new FileStat(data.ino, FileType.REGULAR, data.size, allocated(data), 1, 0);
    }

    /** @return the bytes a file takes: its size in whole pages (no holes) */
    private static long allocated(Data data) {
        return Math.ceilDiv(data.size, PAGE) * PAGE;
    }

    /** Free space: the device less the pages the files take. */
    @Override
    public synchronized FsStat statfs() {
        long total = device.capacity() / PAGE;
        long used = files.values().stream().mapToLong(data -> allocated(data) / PAGE).sum();
        return new FsStat(PAGE, total, total - used, 0, 0);
    }

    /** @return the device's capacity: a toy file lives in memory but is saved whole to the device */
    @Override
    public long maxFileSize() {
        return device.capacity();
    }

    @Override
    public void sync() throws IOException {
        persist(true);
    }

    @Override
    public long dropCleanCache() {
        return 0;
    }

    @Override
    public IoStats stats() {
        return new IoStats(0, 0, DeviceStats.ZERO, 0, 0, 0, new long[1]);
    }

    @Override
    public synchronized void close() throws IOException {
        if (!closed) {
            persist(true);
            closed = true;
        }
    }

    private final class ToyFile implements IomapFile, MappedFile {
        private final Data data;

        ToyFile(Data data) {
            this.data = data;
        }

        private void ensure(long length) {
            if (length > data.bytes.length) {
                data.bytes = Arrays.copyOf(data.bytes, (int) Math.max(length, data.bytes.length * 2L));
            }
        }

        @Override
        public long ino() {
            return data.ino;
        }

        @Override
        public long size() {
            synchronized (ToyFileSystem.this) {
                return data.size;
            }
        }

        /** The interface's answer (all data, the hole at EOF), or the planted bug's. */
        @Override
        public long seekHole(long offset) throws IOException {
            long hole = IomapFile.super.seekHole(offset);
            return bugs.contains(Bug.SEEK_HOLE_AT_OFFSET) ? offset : hole;
        }

        @Override
        public int read(long pos, ByteBuffer dst) {
            synchronized (ToyFileSystem.this) {
                if (pos >= data.size) {
                    return -1;
                }
                int n = (int) Math.min(dst.remaining(), data.size - pos);
                dst.put(data.bytes, (int) pos, n);
                return n;
            }
        }

        @Override
        public List<FileExtent> fiemap(long offset, long length, boolean sync) throws IOException {
            InvalidRangeException.checkRange("fiemap", offset, Math.min(length, Long.MAX_VALUE - offset), Long.MAX_VALUE);
            if (sync) {
                fsync();
            }
            synchronized (ToyFileSystem.this) {
                long end = Math.min(data.size, offset + Math.min(length, Long.MAX_VALUE - offset));
                if (offset >= end) {
                    return List.of();
                }
                Set<FileExtent.Flag> flags = EnumSet.of(FileExtent.Flag.LAST);
                if (data.dirty) {
                    flags.addAll(EnumSet.of(FileExtent.Flag.DELALLOC, FileExtent.Flag.UNKNOWN));
                }
                return List.of(new FileExtent(offset, data.dirty ? 0 : data.address + offset, end - offset, flags));
            }
        }

        @Override
        public int write(long pos, ByteBuffer src) throws IOException {
            InvalidRangeException.checkRange("toy write", pos, src.remaining(), 1L << 30);
            synchronized (ToyFileSystem.this) {
                data.dirty = true;
                int n = src.remaining();
                ensure(pos + n);
                src.get(data.bytes, (int) pos, n);
                data.size = Math.max(data.size, pos + n);
                return n;
            }
        }

        @Override
        public void truncate(long size) throws IOException {
            InvalidRangeException.checkRange("toy truncate", size, 0, 1L << 30);
            synchronized (ToyFileSystem.this) {
                data.dirty = true;
                ensure(size);
                if (size < data.size && !bugs.contains(Bug.TRUNCATE_KEEPS_TAIL)) {
                    Arrays.fill(data.bytes, (int) size, (int) data.size, (byte) 0);
                }
                data.size = size;
            }
        }

        @Override
        public void fallocate(FallocateMode mode, long offset, long length, boolean keepSize) throws IOException {
            InvalidRangeException.checkRange("toy fallocate", offset, length, 1L << 30);
            if (length == 0) {
                throw new InvalidRangeException("toy fallocate: length 0");
            }
            synchronized (ToyFileSystem.this) {
                data.dirty = true;
                long end = offset + length;
                if (mode != FallocateMode.ALLOCATE) {
                    long stop = Math.min(end, data.size);
                    if (offset < stop) {
                        Arrays.fill(data.bytes, (int) offset, (int) stop, (byte) 0);
                    }
                }
                if (!keepSize && mode != FallocateMode.PUNCH_HOLE && end > data.size) {
                    ensure(end);
                    data.size = end;
                }
            }
        }

        @Override
        public void unshare(long offset, long length) throws IOException {
            throw new NotSupportedException("toy: unshare (COPY_ON_WRITE)");
        }

        @Override
        public void cloneRange(IomapFile source, long srcOffset, long dstOffset, long length) throws IOException {
            throw new NotSupportedException("toy: clone (CLONE)");
        }

        @Override
        public void fsync() throws IOException {
            persist(!bugs.contains(Bug.FSYNC_WITHOUT_FLUSH));
        }

        @Override
        public void fdatasync() throws IOException {
            fsync();
        }

        @Override
        public MappedFile map() {
            return this;
        }

        @Override
        public void store(long pos, ByteBuffer src) throws IOException {
            synchronized (ToyFileSystem.this) {
                data.dirty = true;
                checkMapped(pos, src.remaining());
                int n = src.remaining();
                long inside = Math.max(0, Math.min(n, data.size - pos));
                src.get(data.bytes, (int) pos, (int) inside);
                src.position(src.position() + (int) (n - inside));
            }
        }

        @Override
        public void load(long pos, ByteBuffer dst) throws IOException {
            synchronized (ToyFileSystem.this) {
                checkMapped(pos, dst.remaining());
                ensure(pos + dst.remaining());
                dst.put(data.bytes, (int) pos, dst.remaining());
            }
        }

        private void checkMapped(long pos, int length) throws InvalidRangeException {
            long mappable = (data.size + PAGE - 1) / PAGE * PAGE;
            if (pos < 0 || pos + length > mappable) {
                throw new InvalidRangeException("toy: mapped access past the last page");
            }
        }

        @Override
        public FileStat stat() {
            synchronized (ToyFileSystem.this) {
                return new FileStat(data.ino, FileType.REGULAR, data.size, allocated(data), 1, 0);
            }
        }

        @Override
        public void close() {
        }
    }
}
