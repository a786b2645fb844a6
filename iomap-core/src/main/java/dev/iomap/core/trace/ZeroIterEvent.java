package dev.iomap.core.trace;

import dev.iomap.spi.IomapInode;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** The kernel's {@code iomap_zero_iter} tracepoint (class {@code iomap_range_class}). */
@Name(ZeroIterEvent.NAME)
@Label("iomap_zero_iter")
@Description("One mapping's part of a zero range (the kernel's iomap_zero_iter): the range zeroed through the cache.")
public final class ZeroIterEvent extends IomapRangeEvent {
    /** The event's name: {@code iomap.iomap_zero_iter}. */
    public static final String NAME = "iomap.iomap_zero_iter";

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param offset the first byte of the range
     * @param length its length in bytes
     */
    public static void emit(IomapInode inode, long offset, long length) {
        ZeroIterEvent event = new ZeroIterEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.set(inode, offset, length);
        event.commit();
    }
}
