package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Native memory for the structs and buffers of replies, one set per worker thread (libfuse's workers
 * live as long as the loop, so each allocates once): a {@code fuse_entry_param}, a {@code struct stat},
 * a {@code struct statvfs}, and a buffer that grows to the largest reply asked for (a 1 MiB read).
 * Confined to its thread by {@link #current()}; freed when the thread is gone.
 */
final class ReplyMemory {
    private static final ThreadLocal<ReplyMemory> CURRENT = ThreadLocal.withInitial(ReplyMemory::new);

    private final Arena arena = Arena.ofAuto();
    final MemorySegment entry = arena.allocate(FuseStructs.ENTRY_PARAM);
    final MemorySegment stat = arena.allocate(FuseStructs.STAT);
    final MemorySegment statvfs = arena.allocate(FuseStructs.STATVFS);
    private MemorySegment buffer = arena.allocate(64 * 1024, 4096);

    private ReplyMemory() {
    }

    /** @return the calling thread's memory */
    static ReplyMemory current() {
        return CURRENT.get();
    }

    /**
     * @param size bytes needed
     * @return {@code size} bytes of this thread's buffer (grown, page aligned, if it was smaller)
     */
    MemorySegment buffer(long size) {
        if (buffer.byteSize() < size) {
            buffer = Arena.ofAuto().allocate(Math.max(size, buffer.byteSize() * 2), 4096);
        }
        return buffer.asSlice(0, size);
    }

    /**
     * Fills a {@code fuse_entry_param}: node id, generation, attributes and the mount's timeouts.
     *
     * @param e {@link FuseStructs#ENTRY_PARAM}-sized memory
     * @param entry what to fill in
     * @param cache the mount's timeouts
     */
    static void fillEntry(MemorySegment e, FuseBridge.Entry entry, CacheMode cache) {
        e.fill((byte) 0);
        e.set(JAVA_LONG, FuseStructs.ENTRY_INO, entry.nodeid());
        e.set(JAVA_LONG, FuseStructs.ENTRY_GENERATION, Integer.toUnsignedLong(entry.generation()));
        FuseStructs.fillStat(e.asSlice(FuseStructs.ENTRY_ATTR, FuseStructs.STAT.byteSize()), entry.attributes());
        e.set(JAVA_DOUBLE, FuseStructs.ENTRY_ATTR_TIMEOUT, cache.attributeTimeout());
        e.set(JAVA_DOUBLE, FuseStructs.ENTRY_ENTRY_TIMEOUT, cache.entryTimeout());
    }
}
