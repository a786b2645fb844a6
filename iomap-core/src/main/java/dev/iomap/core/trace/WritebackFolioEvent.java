package dev.iomap.core.trace;

import dev.iomap.spi.IomapInode;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** The kernel's {@code iomap_writeback_folio} tracepoint (class {@code iomap_range_class}, plus the folio's order). */
@Name(WritebackFolioEvent.NAME)
@Label("iomap_writeback_folio")
@Description("A dirty folio is written back (the kernel's iomap_writeback_folio, was iomap_writepage): the folio's range, with its order.")
public final class WritebackFolioEvent extends IomapRangeEvent {
    /** The event's name: {@code iomap.iomap_writeback_folio}. */
    public static final String NAME = "iomap.iomap_writeback_folio";

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
        WritebackFolioEvent event = new WritebackFolioEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.set(inode, offset, length);
        event.order = order;
        event.commit();
    }
}
