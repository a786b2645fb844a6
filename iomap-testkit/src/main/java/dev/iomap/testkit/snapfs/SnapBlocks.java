package dev.iomap.testkit.snapfs;

import static dev.iomap.testkit.snapfs.SnapState.PENDING;
import static dev.iomap.testkit.snapfs.SnapState.UNWRITTEN;
import static dev.iomap.testkit.snapfs.SnapState.WRITTEN;
import static dev.iomap.testkit.snapfs.SnapState.deviceBlock;
import static dev.iomap.testkit.snapfs.SnapState.pack;
import static dev.iomap.testkit.snapfs.SnapState.state;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.NoSpaceException;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.testkit.snapfs.SnapState.Inode;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The block maps of one snapfs mount: mappings for reads, writes and writeback, their completion, and
 * the frees and conversions of truncate and fallocate. Not thread-safe: {@link SnapMount} calls it
 * holding its monitor. With POSIX attributes declared it never changes an inode's times: a write's
 * times are set by the core through {@code updateTimes} when it starts, so writeback completion leaves
 * a later {@code utimensat} alone. Without them (the core then sets no times) writeback completion sets
 * the one modification time, as snapfs did before it kept attributes.
 */
final class SnapBlocks {
    private static final int MAX_RUN_BLOCKS = 1024;

    private final SnapState state;
    private final SnapSpace space;
    private final int blockSize;
    private final boolean timesFromCore;

    /**
     * @param state the mount's metadata
     * @param space the mount's free-space map
     * @param blockSize the filesystem block size
     * @param timesFromCore whether POSIX attributes are declared, so the core sets a write's times
     */
    SnapBlocks(SnapState state, SnapSpace space, int blockSize, boolean timesFromCore) {
        this.state = state;
        this.space = space;
        this.blockSize = blockSize;
        this.timesFromCore = timesFromCore;
    }

    /**
     * Reads and reports (seek's {@code REPORT}, which allocates nothing) get the mapping at
     * {@code pos} (a hole up to the next mapped block). Writes and write faults allocate the hole they
     * start in, up to 1024 contiguous blocks (PENDING, mapped NEW); every mapping carries the inode's
     * validity cookie.
     */
    IomapMapping map(Inode inode, long pos, long length, Set<IomapRequest> request) throws IOException {
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

    /** A mapping is stale once writeback completion, a free or a conversion changed the inode's blocks. */
    boolean valid(IomapInode file, Iomap iomap) {
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
    Iomap mapBlocks(Inode inode, long pos, long length) throws IOException {
        long first = pos / blockSize;
        Long packed = inode.blocks.get(first);
        if (packed == null) {
            throw new IOException("snapfs: writeback of inode " + inode.ino + " at " + pos + " found no block");
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
     * and raises the recorded size up to the engine's; a failed ioend changes nothing. The times stay
     * unless the core sets none (see the class comment).
     */
    void ioendCompleted(IomapInode file, IoendCompletion completion) {
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
        if (!timesFromCore) {
            inode.modified(Instant.now());
        }
    }

    /** Unmaps blocks {@code [from, to)} of a file and frees them (see {@link SnapSpace#free}). */
    void free(Inode inode, long from, long to) {
        inode.mappingSequence++;
        for (Long fileBlock : new ArrayList<>(inode.blocks.subMap(from, to).keySet())) {
            space.free(deviceBlock(inode.blocks.remove(fileBlock)));
        }
    }

    /**
     * PUNCH_HOLE frees the blocks; ALLOCATE maps holes UNWRITTEN; ZERO_RANGE also turns mapped blocks
     * UNWRITTEN. On {@link NoSpaceException} the blocks this call allocated are freed.
     */
    void fallocate(Inode inode, FallocateMode mode, long offset, long length) throws IOException {
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
}
