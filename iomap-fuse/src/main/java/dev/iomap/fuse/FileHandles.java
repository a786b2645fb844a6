package dev.iomap.fuse;

import dev.iomap.api.IomapFile;
import dev.iomap.api.OpenFlag;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The files the kernel has open: FUSE file handles (never 0, never reused) to {@link IomapFile}s and the
 * node each was opened through. Thread-safe.
 */
final class FileHandles {
    /**
     * An open file.
     *
     * @param nodeid the node it was opened through
     * @param file the file
     * @param flags what it was opened with
     */
    record Handle(long nodeid, IomapFile file, Set<OpenFlag> flags) {
        Handle {
            flags = Set.copyOf(flags);
        }
    }

    private final ConcurrentHashMap<Long, Handle> open = new ConcurrentHashMap<>();
    private final AtomicLong next = new AtomicLong(1);

    /**
     * @param nodeid the node the file was opened through
     * @param file the open file
     * @return its new handle
     */
    long add(long nodeid, IomapFile file) {
        return add(nodeid, file, Set.of());
    }

    /**
     * @param nodeid the node the file was opened through
     * @param file the open file
     * @param flags what it was opened with
     * @return its new handle
     */
    long add(long nodeid, IomapFile file, Set<OpenFlag> flags) {
        long handle = next.getAndIncrement();
        open.put(handle, new Handle(nodeid, file, flags));
        return handle;
    }

    /**
     * @param handle a handle given by {@link #add}
     * @return its file
     * @throws ClosedChannelException if the handle is unknown or released (EBADF)
     */
    IomapFile get(long handle) throws ClosedChannelException {
        return handle(handle).file();
    }

    /**
     * @param handle a handle given by {@link #add}
     * @return it with its node
     * @throws ClosedChannelException if the handle is unknown or released (EBADF)
     */
    Handle handle(long handle) throws ClosedChannelException {
        Handle found = open.get(handle);
        if (found == null) {
            throw new ClosedChannelException();
        }
        return found;
    }

    /** @return the file of the handle, or null if it is not open */
    IomapFile find(long handle) {
        Handle found = open.get(handle);
        return found == null ? null : found.file();
    }

    /**
     * Forgets the handle (its file is the caller's to close).
     *
     * @param handle a handle
     * @return what it named, or null for an unknown handle
     */
    Handle remove(long handle) {
        return open.remove(handle);
    }

    /** @return how many handles are open */
    int size() {
        return open.size();
    }

    /** Closes every file still open (at unmount), throwing the first failure after trying all. */
    void releaseAll() throws IOException {
        IOException failure = null;
        for (Long handle : List.copyOf(open.keySet())) {
            Handle removed = open.remove(handle);
            if (removed == null) {
                continue;
            }
            try {
                removed.file().close();
            } catch (IOException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
