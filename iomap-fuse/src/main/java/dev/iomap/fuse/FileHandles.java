package dev.iomap.fuse;

import dev.iomap.api.IomapFile;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The files the kernel has open: FUSE file handles (never 0, never reused) to {@link IomapFile}s.
 * Thread-safe.
 */
final class FileHandles {
    private final ConcurrentHashMap<Long, IomapFile> open = new ConcurrentHashMap<>();
    private final AtomicLong next = new AtomicLong(1);

    long add(IomapFile file) {
        long handle = next.getAndIncrement();
        open.put(handle, file);
        return handle;
    }

    /**
     * @param handle a handle given by {@link #add}
     * @return its file
     * @throws ClosedChannelException if the handle is unknown or released (EBADF)
     */
    IomapFile get(long handle) throws ClosedChannelException {
        IomapFile file = open.get(handle);
        if (file == null) {
            throw new ClosedChannelException();
        }
        return file;
    }

    /** @return the file of the handle, or null if it is not open */
    IomapFile find(long handle) {
        return open.get(handle);
    }

    /** Forgets the handle and closes its file; an unknown handle is ignored. */
    void release(long handle) throws IOException {
        IomapFile file = open.remove(handle);
        if (file != null) {
            file.close();
        }
    }

    /** @return how many handles are open */
    int size() {
        return open.size();
    }

    /** Closes every file still open (at unmount), throwing the first failure after trying all. */
    void releaseAll() throws IOException {
        IOException failure = null;
        for (Long handle : List.copyOf(open.keySet())) {
            try {
                release(handle);
            } catch (IOException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
