package dev.iomap.core.trace;

import dev.iomap.spi.IomapInode;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** The kernel's {@code iomap_dio_invalidate_fail} tracepoint (class {@code iomap_range_class}). */
@Name(DioInvalidateFailEvent.NAME)
@Label("iomap_dio_invalidate_fail")
@Description("Direct I/O found cached folios over its range that could not be invalidated, and falls back or fails.")
public final class DioInvalidateFailEvent extends IomapRangeEvent {
    /** The event's name: {@code iomap.iomap_dio_invalidate_fail}. */
    public static final String NAME = "iomap.iomap_dio_invalidate_fail";

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param offset the first byte of the range
     * @param length its length in bytes
     */
    public static void emit(IomapInode inode, long offset, long length) {
        DioInvalidateFailEvent event = new DioInvalidateFailEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.set(inode, offset, length);
        event.commit();
    }
}
