package dev.iomap.testkit.snapfs;

import static dev.iomap.testkit.snapfs.SnapState.PENDING;
import static dev.iomap.testkit.snapfs.SnapState.UNWRITTEN;
import static dev.iomap.testkit.snapfs.SnapState.WRITTEN;
import static dev.iomap.testkit.snapfs.SnapState.deviceBlock;
import static dev.iomap.testkit.snapfs.SnapState.pack;
import static dev.iomap.testkit.snapfs.SnapState.state;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.api.NoSpaceException;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.InodeInfo;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.MountedFilesystem;
import dev.iomap.spi.WritebackOps;
import dev.iomap.testkit.snapfs.SnapState.Inode;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One snapfs mount. Every method holds the mount's monitor. Writes allocate blocks at
 * {@code begin} (PENDING, mapped NEW); writeback completion marks them WRITTEN and moves the on-disk
 * size; a commit (fsync and fdatasync if the adapter declares DURABLE_FSYNC, sync, unmount) flushes
 * the data, writes the whole metadata to the other slot and flushes again. Blocks come from
 * {@link SnapSpace}, which holds a freed block back until the next commit if the last one references
 * it. After {@link #unmount} the mount must not be used.
 */
final class SnapMount implements MountedFilesystem, IomapOps, WritebackOps {
    static final long MAX_FILE_SIZE = 1L << 40;
    private static final int MAX_RUN_BLOCKS = 1024;

    private final BlockDevice device;
    private final SnapLayout layout;
    private final SnapState state;
    private final SnapSpace space;
    private final int blockSize;
    private final AtomicReference<Runnable> afterWriteBegin;
    private final boolean durableFsync;
    private long sequence;

    /**
     * @param device the mounted device
     * @param layout its layout, from the superblock
     * @param state the newest commit's metadata; the mount owns it from now on
     * @param sequence that commit's sequence number
     * @param afterWriteBegin the adapter's test hook (see {@link SnapAdapter#runOnceAfterNextWriteBegin})
     * @param durableFsync whether fsync and fdatasync commit (the adapter declares DURABLE_FSYNC)
     */
    SnapMount(BlockDevice device, SnapLayout layout, SnapState state, long sequence,
            AtomicReference<Runnable> afterWriteBegin, boolean durableFsync) {
        this.device = device;
        this.afterWriteBegin = afterWriteBegin;
        this.durableFsync = durableFsync;
        this.layout = layout;
        this.state = state;
        this.sequence = sequence;
        this.blockSize = layout.blockSize();
        state.inodes.values().removeIf(inode -> inode.links <= 0 && inode.ino != SnapState.ROOT);
        this.space = new SnapSpace(layout, state.committedBlocks());
    }

    private Inode inode(long ino) throws NoSuchFileException {
        Inode inode = state.inodes.get(ino);
        if (inode == null) {
            throw new NoSuchFileException("snapfs inode " + ino);
        }
        return inode;
    }

    /** @return the block size the image was formatted with */
    @Override
    public int blockSize() {
        return blockSize;
    }

    /** @return the root directory's inode number, always 1 */
    @Override
    public long rootIno() {
        return SnapState.ROOT;
    }

    /** @return 1 TiB, whatever the device's size (space runs out first) */
    @Override
    public long maxFileSize() {
        return MAX_FILE_SIZE;
    }

    /** Allocated bytes count every mapped block, pending, unwritten or written. */
    @Override
    public synchronized InodeInfo getattr(long ino) throws IOException {
        Inode inode = inode(ino);
        return new InodeInfo(ino, inode.type, inode.size, (long) inode.blocks.size() * blockSize, inode.links,
                inode.modified);
    }

    /**
     * Names are looked up as given: byte for byte (the one-to-one strings of {@link FileNames}),
     * case-sensitive, no normalisation.
     */
    @Override
    public synchronized long lookup(long dirIno, String name) throws IOException {
        Long ino = inode(dirIno).entries.get(name);
        if (ino == null) {
            throw new NoSuchFileException(name);
        }
        return ino;
    }

    /** Inode numbers are never reused. Never fails for space: metadata space is checked at commit. */
    @Override
    public synchronized long create(long dirIno, String name, FileType type) throws IOException {
        Inode dir = inode(dirIno);
        if (dir.entries.containsKey(name)) {
            throw new FileAlreadyExistsException(name);
        }
        long ino = state.nextIno++;
        Inode inode = new Inode(ino, type);
        inode.modified = System.currentTimeMillis();
        state.inodes.put(ino, inode);
        dir.entries.put(name, ino);
        return ino;
    }

    /** Entries in the byte order of their names ({@link FileNames#BYTE_ORDER}: a sorted map). */
    @Override
    public synchronized List<DirEntry> readdir(long dirIno) throws IOException {
        List<DirEntry> out = new ArrayList<>();
        for (Map.Entry<String, Long> entry : inode(dirIno).entries.entrySet()) {
            out.add(new DirEntry(entry.getKey(), entry.getValue(), inode(entry.getValue()).type));
        }
        return out;
    }

    /**
     * Drops the name and a link; the inode and its blocks go at {@link #evict}. Refuses a directory
     * with the C library's words, "Is a directory" (what errno mappers look for).
     */
    @Override
    public synchronized void unlink(long dirIno, String name) throws IOException {
        Inode target = inode(lookup(dirIno, name));
        if (target.type == FileType.DIRECTORY) {
            throw new FileSystemException(name, null, "Is a directory");
        }
        inode(dirIno).entries.remove(name);
        target.links--;
    }

    /** Removes an empty directory's name and inode at once (directories have no open files). */
    @Override
    public synchronized void rmdir(long dirIno, String name) throws IOException {
        Inode target = inode(lookup(dirIno, name));
        if (target.type != FileType.DIRECTORY) {
            throw new NotDirectoryException(name);
        }
        if (!target.entries.isEmpty()) {
            throw new DirectoryNotEmptyException(name);
        }
        inode(dirIno).entries.remove(name);
        state.inodes.remove(target.ino);
    }

    /** A replaced directory goes at once; a replaced file loses a link and is returned for eviction. */
    @Override
    public synchronized long rename(long fromDir, String fromName, long toDir, String toName) throws IOException {
        long ino = lookup(fromDir, fromName);
        Inode target = inode(toDir);
        Long replaced = target.entries.get(toName);
        if (replaced != null && replaced == ino) {
            return -1;
        }
        if (replaced != null) {
            Inode victim = inode(replaced);
            if (victim.type == FileType.DIRECTORY && !victim.entries.isEmpty()) {
                throw new DirectoryNotEmptyException(toName);
            }
        }
        inode(fromDir).entries.remove(fromName);
        target.entries.put(toName, ino);
        if (replaced == null) {
            return -1;
        }
        Inode victim = inode(replaced);
        if (victim.type == FileType.DIRECTORY) {
            state.inodes.remove(replaced);
            return -1;
        }
        victim.links--;
        return replaced;
    }

    /**
     * Swaps the two entries in memory; the next state commit writes both or, after a power cut
     * before it, neither. Snapfs keeps no parent pointers or directory link counts.
     */
    @Override
    public synchronized void exchange(long dir1, String name1, long dir2, String name2) throws IOException {
        long first = lookup(dir1, name1);
        long second = lookup(dir2, name2);
        inode(dir1).entries.put(name1, second);
        inode(dir2).entries.put(name2, first);
    }

    /** Counts data blocks only (superblock and slots excluded); inodes are unbounded. */
    @Override
    public synchronized FsStat statfs() {
        long freeBlocks = layout.dataBlocks() - space.usedDataBlocks();
        return new FsStat(blockSize, layout.dataBlocks(), freeBlocks, Long.MAX_VALUE, Long.MAX_VALUE);
    }

    /** @return this mount: mappings come from its block maps */
    @Override
    public IomapOps iomapOps() {
        return this;
    }

    /** @return this mount */
    @Override
    public WritebackOps writebackOps() {
        return this;
    }

    // ---- mapping ----

    /**
     * Reads and reports (seek's {@code REPORT}, which allocates nothing) get the mapping at
     * {@code pos} (a hole up to the next mapped block). Writes and write
     * faults allocate the hole they start in, up to 1024 contiguous blocks (PENDING, mapped NEW);
     * every mapping carries the inode's validity cookie. Runs the adapter's test hook, if set, after
     * a write's mapping is made.
     */
    @Override
    public synchronized IomapMapping begin(IomapInode file, long pos, long length, Set<IomapRequest> request)
            throws IOException {
        IomapMapping mapping = map(file, pos, length, request);
        if (request.contains(IomapRequest.WRITE)) {
            Runnable hook = afterWriteBegin.getAndSet(null);
            if (hook != null) {
                hook.run();
            }
        }
        return mapping;
    }

    private IomapMapping map(IomapInode file, long pos, long length, Set<IomapRequest> request)
            throws IOException {
        Inode inode = inode(file.ino());
        long first = pos / blockSize;
        long last = Math.max(first, (pos + length - 1) / blockSize);
        Long packed = inode.blocks.get(first);
        boolean allocate = request.contains(IomapRequest.WRITE) || request.contains(IomapRequest.FAULT);
        if (packed == null && !allocate) {
            Long next = inode.blocks.ceilingKey(first);
            long end = next == null ? last + 1 : Math.min(next, last + 1);
            return IomapMapping.of(Iomap.hole(first * blockSize, (end - first) * blockSize)
                    .withValidityCookie(inode.mappingSequence));
        }
        if (packed == null) {
            Long nextMapped = inode.blocks.ceilingKey(first);
            long holeEnd = nextMapped == null ? last + 1 : Math.min(nextMapped, last + 1);
            long count = Math.min(holeEnd - first, MAX_RUN_BLOCKS);
            long[] run = space.allocate(count);
            for (long b = 0; b < run[1]; b++) {
                inode.blocks.put(first + b, pack(run[0] + b, PENDING));
            }
            return IomapMapping.of(mapping(first, run[1], run[0], PENDING).withValidityCookie(inode.mappingSequence));
        }
        long count = 1;
        while (first + count <= last && count < MAX_RUN_BLOCKS) {
            Long next = inode.blocks.get(first + count);
            if (next == null || state(next) != state(packed) || deviceBlock(next) != deviceBlock(packed) + count) {
                break;
            }
            count++;
        }
        return IomapMapping.of(mapping(first, count, deviceBlock(packed), state(packed))
                .withValidityCookie(inode.mappingSequence));
    }

    /**
     * A mapping is stale once writeback completion, a free or a conversion changed the inode's
     * blocks: a write that got "NEW" for a pending block must not zero it after the block was
     * written back and its folio reclaimed (the kernel's {@code iomap_valid}).
     */
    @Override
    public synchronized boolean valid(IomapInode file, Iomap iomap) {
        Inode inode = state.inodes.get(file.ino());
        return inode != null && inode.mappingSequence == iomap.validityCookie();
    }

    private Iomap mapping(long fileBlock, long count, long deviceBlock, int blockState) {
        long offset = fileBlock * blockSize;
        long length = count * blockSize;
        long address = deviceBlock * blockSize;
        return switch (blockState) {
            case UNWRITTEN -> new Iomap(offset, length, IomapType.UNWRITTEN, Set.of(), address, null, 0);
            case PENDING -> new Iomap(offset, length, IomapType.MAPPED, Set.of(IomapFlag.NEW), address, null, 0);
            default -> Iomap.mapped(offset, length, address);
        };
    }

    /**
     * The run of blocks contiguous on the device from {@code pos}, MAPPED or UNWRITTEN; an
     * {@link IOException} if a dirty block has no device block (a bug in the caller or here).
     */
    @Override
    public synchronized Iomap mapBlocks(IomapInode file, long pos, long length) throws IOException {
        Inode inode = inode(file.ino());
        long first = pos / blockSize;
        Long packed = inode.blocks.get(first);
        if (packed == null) {
            throw new IOException("snapfs: writeback of inode " + file.ino() + " at " + pos + " found no block");
        }
        long last = (pos + length - 1) / blockSize;
        long count = 1;
        while (first + count <= last) {
            Long next = inode.blocks.get(first + count);
            boolean nextUnwritten = next != null && state(next) == UNWRITTEN;
            if (next == null || nextUnwritten != (state(packed) == UNWRITTEN)
                    || deviceBlock(next) != deviceBlock(packed) + count) {
                break;
            }
            count++;
        }
        long offset = first * blockSize;
        long address = deviceBlock(packed) * blockSize;
        return state(packed) == UNWRITTEN
                ? new Iomap(offset, count * blockSize, IomapType.UNWRITTEN, Set.of(), address, null, 0)
                : Iomap.mapped(offset, count * blockSize, address);
    }

    /**
     * Marks the written blocks WRITTEN (converting unwritten ones), invalidates handed-out mappings
     * and raises the recorded size up to the engine's; a failed ioend changes nothing.
     */
    @Override
    public synchronized void ioendCompleted(IomapInode file, IoendCompletion completion) throws IOException {
        if (completion.failed()) {
            return;
        }
        Inode inode = state.inodes.get(file.ino());
        if (inode == null) {
            return;
        }
        long firstDevice = completion.address() / blockSize;
        long first = completion.offset() / blockSize;
        long last = (completion.end() - 1) / blockSize;
        for (long b = first; b <= last; b++) {
            Long packed = inode.blocks.get(b);
            if (packed != null && deviceBlock(packed) == firstDevice + (b - first)) {
                inode.blocks.put(b, pack(deviceBlock(packed), WRITTEN));
            }
        }
        inode.mappingSequence++;
        inode.size = Math.max(inode.size, Math.min(file.size(), completion.end()));
        inode.modified = System.currentTimeMillis();
    }

    /** Unmaps blocks {@code [from, to)} of a file and frees them (see {@link SnapSpace#free}). */
    private void free(Inode inode, long from, long to) {
        inode.mappingSequence++;
        for (Long fileBlock : new ArrayList<>(inode.blocks.subMap(from, to).keySet())) {
            space.free(deviceBlock(inode.blocks.remove(fileBlock)));
        }
    }

    /** Frees the blocks past the new size (committed ones after the next commit). */
    @Override
    public synchronized void setSize(IomapInode file, long newSize) throws IOException {
        Inode inode = inode(file.ino());
        free(inode, (newSize + blockSize - 1) / blockSize, Long.MAX_VALUE);
        inode.size = newSize;
        inode.modified = System.currentTimeMillis();
    }

    /**
     * PUNCH_HOLE frees the blocks; ALLOCATE maps holes UNWRITTEN; ZERO_RANGE also turns mapped blocks
     * UNWRITTEN. On {@link NoSpaceException} the blocks this call allocated are freed.
     */
    @Override
    public synchronized void fallocate(IomapInode file, FallocateMode mode, long offset, long length)
            throws IOException {
        Inode inode = inode(file.ino());
        long first = offset / blockSize;
        long end = (offset + length) / blockSize;
        inode.mappingSequence++;
        switch (mode) {
            case PUNCH_HOLE -> free(inode, first, end);
            case ALLOCATE, ZERO_RANGE -> {
                List<Long> added = new ArrayList<>();
                try {
                    for (long b = first; b < end; b++) {
                        Long packed = inode.blocks.get(b);
                        if (packed == null) {
                            long device = space.allocate(1)[0];
                            inode.blocks.put(b, pack(device, UNWRITTEN));
                            added.add(b);
                        } else if (mode == FallocateMode.ZERO_RANGE) {
                            inode.blocks.put(b, pack(deviceBlock(packed), UNWRITTEN));
                        }
                    }
                } catch (NoSpaceException e) {
                    for (long b : added) {
                        space.free(deviceBlock(inode.blocks.remove(b)));
                    }
                    throw e;
                }
            }
            default -> throw new IllegalStateException(mode.name());
        }
    }

    // ---- durability ----

    /**
     * Raises the file's size to what the engine has, then commits everything, data and metadata of
     * every file (a whole-filesystem snapshot is the only commit snapfs has); without DURABLE_FSYNC it
     * commits nothing.
     */
    @Override
    public synchronized void fsync(IomapInode file, boolean dataOnly) throws IOException {
        Inode inode = inode(file.ino());
        inode.size = Math.max(inode.size, file.size());
        if (durableFsync) {
            commit();
        }
    }

    /** Drops the inode and frees its blocks (committed ones after the next commit). */
    @Override
    public synchronized void evict(long ino) throws IOException {
        Inode inode = state.inodes.remove(ino);
        if (inode != null) {
            free(inode, 0, Long.MAX_VALUE);
        }
    }

    /** Commits: data flush, metadata to the other slot, flush. */
    @Override
    public synchronized void sync() throws IOException {
        commit();
    }

    /** Commits, as {@link #sync}. */
    @Override
    public synchronized void unmount() throws IOException {
        commit();
    }

    /**
     * Data first, then the metadata in the other slot, then a flush; only then are blocks freed since
     * the last commit reusable. A commit that fails may still have reached the device, so the blocks
     * it references stay protected as well as the last commit's.
     */
    private void commit() throws IOException {
        device.flush();
        BitSet referenced = state.committedBlocks();
        space.committing(referenced);
        layout.writeSlot(device, sequence + 1, state.serialize());
        device.flush();
        sequence++;
        space.committed(referenced);
    }
}
