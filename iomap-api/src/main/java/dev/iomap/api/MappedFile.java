package dev.iomap.api;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A shared writable mapping of a file, standing in for {@code mmap(MAP_SHARED)}: stores go straight to
 * the cached pages. A store may reach past EOF inside the last page (never written back); beyond the
 * last page it fails with {@link InvalidRangeException}, where mmap would raise SIGBUS. Thread-safe.
 */
public interface MappedFile {

    /**
     * @param pos file offset
     * @param src the bytes; its position advances
     * @throws IOException beyond the last page, no space, or a device error
     */
    void store(long pos, ByteBuffer src) throws IOException;

    /**
     * @param pos file offset
     * @param dst where the bytes go; its position advances
     * @throws IOException beyond the last page, or a device error
     */
    void load(long pos, ByteBuffer dst) throws IOException;
}
