package dev.iomap.adapter.zonefs;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.spi.FileOps;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.SuperOps;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.NotSupportedException.Refusal;
import dev.iomap.spi.WritebackOps;
import dev.iomap.device.Zone;
import dev.iomap.device.ZonedBlockDevice;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * One mount of a zonefs-like image: the namespace rebuilt from the zone report ({@code /cnv/<n>} and
 * {@code /seq/<n>}, one file per zone after zone 0, numbered from 0 within each directory, as zonefs
 * names them), and the size changes a zone allows.
 *
 * <p>Inode numbers: a file's is its zone number (zone 0 holds the superblock, so no file has 0); the
 * root is the zone count, {@code cnv} and {@code seq} the two after it. A directory exists only if it
 * has files. The namespace never changes: creating, removing or renaming anything is refused.
 *
 * <p>Names: every name here is ASCII ("cnv", "seq", decimal numbers), whose UTF-16 order is its byte
 * order, so the directories are plain sorted maps. A name asked for is compared as the string it is,
 * never decoded or normalised: any other byte string (in {@link FileNames}' form, as the core passes
 * it) is simply absent.
 *
 * <p>Thread-safe: the namespace is immutable; each file guards its own size.
 */
final class ZonefsLikeMount implements MountedFileSystem, SuperOps, InodeOps, FileOps {
    static final String CONVENTIONAL_DIR = "cnv";
    static final String SEQUENTIAL_DIR = "seq";

    private final ZonedBlockDevice device;
    private final ZonefsSuperblock superblock;
    private final Map<Long, ZoneFile> files = new HashMap<>();
    private final Map<Long, TreeMap<String, Long>> directories = new HashMap<>();
    private final long rootIno;
    private final long maxFileSize;
    private final long mountedMillis = System.currentTimeMillis();
    private final ZoneFileOps ops;
    /** Zone resets by truncates to 0 since mount: the adapter counter {@code zone.resets}. */
    private final LongAdder zoneResets = new LongAdder();
    /** Zone finishes by truncates to the capacity since mount: the adapter counter {@code zone.finishes}. */
    private final LongAdder zoneFinishes = new LongAdder();

    ZonefsLikeMount(ZonedBlockDevice device, ZonefsSuperblock superblock, List<Zone> zones) {
        this.device = device;
        this.superblock = superblock;
        this.rootIno = zones.size();
        this.ops = new ZoneFileOps(this, device, superblock.blockSize());
        TreeMap<String, Long> root = new TreeMap<>();
        directories.put(rootIno, root);
        long largest = superblock.blockSize();
        for (int index = 1; index < zones.size(); index++) {
            Zone zone = zones.get(index);
            String dir = zone.isSequential() ? SEQUENTIAL_DIR : CONVENTIONAL_DIR;
            long dirIno = rootIno + (zone.isSequential() ? 2 : 1);
            root.put(dir, dirIno);
            TreeMap<String, Long> entries = directories.computeIfAbsent(dirIno, ino -> new TreeMap<>());
            String name = Integer.toString(entries.size());
            entries.put(name, (long) index);
            files.put((long) index, new ZoneFile(index, "/" + dir + "/" + name, zone));
            largest = Math.max(largest, zone.capacity());
        }
        this.maxFileSize = largest;
    }

    /** @return the file with inode number {@code ino} */
    ZoneFile file(long ino) throws NoSuchFileException {
        ZoneFile file = files.get(ino);
        if (file == null) {
            throw new NoSuchFileException("inode " + ino + " is not a zone file of " + ZonefsLikeAdapter.NAME);
        }
        return file;
    }

    ZoneFile fileOrNull(long ino) {
        return files.get(ino);
    }

    @Override
    public int blockSize() {
        return superblock.blockSize();
    }

    @Override
    public long rootIno() {
        return rootIno;
    }

    @Override
    public long maxFileSize() {
        return maxFileSize;
    }

    @Override
    public FileStat getattr(long ino) throws IOException {
        if (directories.containsKey(ino)) {
            return new FileStat(ino, FileType.DIRECTORY, 0, 0, 2, mountedMillis);
        }
        ZoneFile file = file(ino);
        return new FileStat(ino, FileType.REGULAR, file.written(), file.capacity(), 1, mountedMillis);
    }

    @Override
    public long lookup(long dirIno, String name) throws IOException {
        Long ino = directory(dirIno).get(name);
        if (ino == null) {
            throw new NoSuchFileException(name);
        }
        return ino;
    }

    @Override
    public List<DirEntry> readdir(long dirIno) throws IOException {
        List<DirEntry> entries = new ArrayList<>();
        for (var entry : directory(dirIno).entrySet()) {
            FileType type = directories.containsKey(entry.getValue()) ? FileType.DIRECTORY : FileType.REGULAR;
            entries.add(new DirEntry(entry.getKey(), entry.getValue(), type));
        }
        entries.sort(Comparator.comparing(DirEntry::name, FileNames.BYTE_ORDER));
        return entries;
    }

    private TreeMap<String, Long> directory(long dirIno) throws IOException {
        TreeMap<String, Long> entries = directories.get(dirIno);
        if (entries == null) {
            file(dirIno);
            throw new NotDirectoryException("inode " + dirIno);
        }
        return entries;
    }

    @Override
    public long create(long dirIno, String name, FileType type) throws IOException {
        if (directory(dirIno).containsKey(name)) {
            throw new FileAlreadyExistsException(name);
        }
        throw new NotSupportedException(ZonefsLikeAdapter.NAME + " has exactly one file per zone, made by mkfs:"
                + " '" + name + "' cannot be created");
    }

    @Override
    public void unlink(long dirIno, String name) throws IOException {
        lookup(dirIno, name);
        throw new NotSupportedException(ZonefsLikeAdapter.NAME + " zone files cannot be removed ('" + name
                + "'); truncate a sequential zone file to 0 to empty its zone", Refusal.NOT_PERMITTED);
    }

    @Override
    public void rmdir(long dirIno, String name) throws IOException {
        lookup(dirIno, name);
        throw new NotSupportedException(ZonefsLikeAdapter.NAME + " directories cannot be removed ('" + name + "')",
                Refusal.NOT_PERMITTED);
    }

    @Override
    public long rename(long fromDir, String fromName, long toDir, String toName) throws IOException {
        lookup(fromDir, fromName);
        throw new NotSupportedException(ZonefsLikeAdapter.NAME + " files cannot be renamed ('" + fromName + "')",
                Refusal.NOT_PERMITTED);
    }

    @Override
    public FsStat statfs() {
        long total = 0;
        long free = 0;
        for (ZoneFile file : files.values()) {
            total += file.capacity();
            if (file.isSequential()) {
                free += file.capacity() - file.written();
            }
        }
        int block = superblock.blockSize();
        return new FsStat(block, total / block, free / block, files.size() + directories.size(), 0);
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
    public IomapOps iomapOps() {
        return ops;
    }

    @Override
    public WritebackOps writebackOps() {
        return ops;
    }

    /**
     * Conventional files keep their size; sequential files go to 0 (zone reset) or to their capacity
     * (zone finish), as zonefs allows.
     */
    @Override
    public void checkSetSize(IomapInode inode, long newSize) throws IOException {
        ZoneFile file = file(inode.ino());
        if (!file.isSequential()) {
            if (newSize != file.capacity()) {
                throw new NotSupportedException(file + " is a conventional zone file of fixed size "
                        + file.capacity() + "; it cannot be truncated to " + newSize, Refusal.NOT_PERMITTED);
            }
            return;
        }
        if (newSize != 0 && newSize != file.capacity()) {
            throw new SequentialFileException(file + ": a sequential zone file can be truncated only to 0"
                    + " (zone reset) or to its capacity " + file.capacity() + " (zone finish), not to " + newSize, Refusal.NOT_PERMITTED);
        }
    }

    /**
     * Resets or finishes the zone (after {@link #checkSetSize} allowed the size). Before a finish the
     * file's dirty data is written back, since nothing can be written below the write pointer after.
     */
    @Override
    public void setSize(IomapInode inode, long newSize) throws IOException {
        checkSetSize(inode, newSize);
        ZoneFile file = file(inode.ino());
        if (!file.isSequential()) {
            return;
        }
        if (newSize == 0) {
            device.resetZone(file.zoneStart());
            zoneResets.increment();
        } else {
            inode.writeAndWait(0, newSize);
            device.finishZone(file.zoneStart());
            zoneFinishes.increment();
        }
        file.resync(newSize);
    }

    /**
     * @return {@code zone.resets} and {@code zone.finishes}: the sequential zones reset (truncate to 0)
     *     and finished (truncate to the capacity) since mount
     */
    @Override
    public Map<String, Long> counters() {
        return Map.of("zone.resets", zoneResets.sum(), "zone.finishes", zoneFinishes.sum());
    }

    @Override
    public void fallocate(IomapInode inode, FallocateMode mode, long offset, long length) throws IOException {
        throw new NotSupportedException(ZonefsLikeAdapter.NAME + " does not fallocate (" + mode + "): a zone file"
                + " is either fully allocated (conventional) or grows only by appending (sequential)");
    }

    @Override
    public void fsync(IomapInode inode, boolean dataOnly) {
        // No metadata: the core flushes the device, which makes the zone write pointers durable.
    }

    @Override
    public void evict(long ino) {
        // Zone files are never unlinked.
    }

    @Override
    public void sync() {
        // Nothing beyond the device flush the core does.
    }

    @Override
    public void unmount() {
        // No metadata to write: the next mount rebuilds everything from the zone report.
    }
}
