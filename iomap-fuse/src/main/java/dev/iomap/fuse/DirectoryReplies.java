package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.nio.charset.StandardCharsets.ISO_8859_1;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The replies to readdir and readdirplus: entries from the request's offset on ({@code .}, {@code ..},
 * then the directory's listing; entry {@code i} has offset {@code i + 1}) while they fit in the size
 * the kernel gave, packed with {@code fuse_add_direntry} or {@code fuse_add_direntry_plus}. readdirplus
 * gives each entry but {@code .} and {@code ..} as a lookup would, and counts its lookup only once it is
 * in the reply ({@link FuseBridge#handedOut}); an entry gone since the listing goes without its inode
 * (node id 0, which the kernel takes as a plain entry). Names are {@link FileNames#encode}'s bytes.
 * Thread-safe.
 */
final class DirectoryReplies {
    /** {@code d_ino} of {@code ..}, which the mount does not look up: libfuse's {@code FUSE_UNKNOWN_INO}. */
    private static final long UNKNOWN_INO = 0xffffffffL;
    private static final int S_IFDIR = 0040000;

    private final Libfuse libfuse;
    private final FuseBridge bridge;

    /**
     * @param libfuse the library
     * @param bridge the operations: inode numbers, entries, lookup counts
     */
    DirectoryReplies(Libfuse libfuse, FuseBridge bridge) {
        this.libfuse = libfuse;
        this.bridge = bridge;
    }

    /**
     * Replies to one readdir or readdirplus request.
     *
     * @param req the request
     * @param listing the directory's listing
     * @param size bytes the kernel takes
     * @param offset the offset of the last entry it has
     * @param plus whether it is readdirplus
     * @throws Throwable as the downcalls
     */
    void reply(MemorySegment req, Directories.Listing listing, long size, long offset, boolean plus) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            List<DirEntry> entries = listing.entries();
            ReplyMemory memory = ReplyMemory.current();
            MemorySegment buffer = memory.buffer(size);
            long used = 0;
            for (long index = Math.max(offset, 0); index < entries.size() + 2L; index++) {
                long added = addEntry(req, arena, memory, buffer.asSlice(used), listing.nodeid(), index, entries,
                        plus);
                if (added < 0) {
                    break;
                }
                used += added;
            }
            int ignored = (int) libfuse.replyBuf.invokeExact(req, buffer, used);
        }
    }

    /** @return bytes added, or -1 if entry {@code index} did not fit */
    private long addEntry(MemorySegment req, Arena arena, ReplyMemory memory, MemorySegment room, long directory,
            long index, List<DirEntry> entries, boolean plus) throws Throwable {
        String name;
        byte[] bytes;
        FuseBridge.Entry entry = null;
        MemorySegment e = memory.entry;
        e.fill((byte) 0);
        MemorySegment stat = e.asSlice(FuseStructs.ENTRY_ATTR, FuseStructs.STAT.byteSize());
        if (index < 2) {
            name = index == 0 ? "." : "..";
            bytes = name.getBytes(ISO_8859_1);
            stat.set(JAVA_LONG, FuseStructs.STAT_INO, index == 0 ? bridge.nodes().ino(directory) : UNKNOWN_INO);
            stat.set(JAVA_INT, FuseStructs.STAT_MODE, S_IFDIR);
        } else {
            DirEntry listed = entries.get((int) (index - 2));
            name = listed.name();
            bytes = FileNames.encode(name);
            entry = plus ? bridge.describe(directory, listed) : null;
            if (entry != null) {
                ReplyMemory.fillEntry(e, entry, bridge.cache());
            } else {
                stat.set(JAVA_LONG, FuseStructs.STAT_INO, listed.ino());
                stat.set(JAVA_INT, FuseStructs.STAT_MODE, listed.type().modeBits());
            }
        }
        MemorySegment cName = arena.allocate(bytes.length + 1L);
        cName.copyFrom(MemorySegment.ofArray(bytes));
        long needed = plus
                ? (long) libfuse.addDirentryPlus.invokeExact(req, room, room.byteSize(), cName, e, index + 1)
                : (long) libfuse.addDirentry.invokeExact(req, room, room.byteSize(), cName, stat, index + 1);
        if (needed > room.byteSize()) {
            return -1;
        }
        if (entry != null) {
            bridge.handedOut(directory, name, entry);
        }
        return needed;
    }
}
