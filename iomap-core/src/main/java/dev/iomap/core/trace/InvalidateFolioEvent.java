package dev.iomap.core.trace;

import dev.iomap.spi.IomapInode;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** The kernel's {@code iomap_invalidate_folio} tracepoint (class {@code iomap_range_class}, plus the folio's order). */
@Name(InvalidateFolioEvent.NAME)
@Label("iomap_invalidate_folio")
@Description("Part or all of a folio is invalidated (truncate, punch, a glock demotion): the range dropped, with the folio's order.")
public final class InvalidateFolioEvent extends IomapRangeEvent {
    /** The event's name: {@code iomap.iomap_invalidate_folio}. */
    public static final String NAME = "iomap.iomap_invalidate_folio";

    /** The folio's order (log2 of its pages). */
    @Label("order")
    int order;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param offset the first byte of the range
     * @param length its length in bytes
     * @param order the folio's order
     */
    public static void emit(IomapInode inode, long offset, long length, int order) {
        InvalidateFolioEvent event = new InvalidateFolioEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.set(inode, offset, length);
        event.order = order;
        event.commit();
    }
}
