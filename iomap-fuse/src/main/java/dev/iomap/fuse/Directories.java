package dev.iomap.fuse;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FileStat;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Open directories: a directory handle to the listing taken at opendir, which readdir and readdirplus
 * page through by offset (so a listing is read once however many requests it takes). Thread-safe.
 */
final class Directories {
    /**
     * A directory's listing.
     *
     * @param nodeid the directory
     * @param entries its entries, without {@code .} and {@code ..}
     * @param opened the directory's attributes at opendir (what getattr answers once it is removed)
     */
    record Listing(long nodeid, List<DirEntry> entries, FileStat opened) {
    }

    private final ConcurrentHashMap<Long, Listing> open = new ConcurrentHashMap<>();
    private final java.util.Set<Long> read = ConcurrentHashMap.newKeySet();
    private final AtomicLong next = new AtomicLong(1);

    long add(long nodeid, List<DirEntry> entries, FileStat opened) {
        long handle = next.getAndIncrement();
        open.put(handle, new Listing(nodeid, List.copyOf(entries), opened));
        return handle;
    }

    /**
     * An open directory that has lost its name (rmdir, or a rename over it) is still there for whoever
     * has it open, with no links, as in Linux ({@code fstat} on it succeeds, {@code st_nlink} 0).
     *
     * @param nodeid a directory
     * @return its attributes at opendir with no links, if a handle of it is open; null otherwise
     */
    FileStat removed(long nodeid) {
        for (Listing listing : open.values()) {
            if (listing.nodeid() == nodeid) {
                FileStat s = listing.opened();
                return new FileStat(s.ino(), s.type(), s.size(), s.allocatedBytes(), 0, s.mode(), s.uid(), s.gid(),
                        s.atime(), s.mtime(), s.ctime(), s.btime());
            }
        }
        return null;
    }

    Listing get(long handle) throws ClosedChannelException {
        Listing listing = open.get(handle);
        if (listing == null) {
            throw new ClosedChannelException();
        }
        return listing;
    }

    /**
     * @param handle a directory handle
     * @return whether this is the first read of its listing (true once per handle)
     */
    boolean firstRead(long handle) {
        return read.add(handle);
    }

    /**
     * @param handle a directory handle
     * @param entries its new listing
     * @return the new listing
     * @throws ClosedChannelException for an unknown handle
     */
    Listing replace(long handle, List<DirEntry> entries) throws ClosedChannelException {
        Listing now = get(handle);
        Listing fresh = new Listing(now.nodeid(), List.copyOf(entries), now.opened());
        open.put(handle, fresh);
        return fresh;
    }

    void remove(long handle) {
        open.remove(handle);
        read.remove(handle);
    }
}
