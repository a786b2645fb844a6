package dev.iomap.core.trace;

import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** The kernel's {@code iomap_iter_dstmap} tracepoint (class {@code iomap_class}). */
@Name(IterDstmapEvent.NAME)
@Label("iomap_iter_dstmap")
@Description("The mapping an adapter's begin returned for an iteration (the destination of a write).")
public final class IterDstmapEvent extends IomapMappingEvent {
    /** The event's name: {@code iomap.iomap_iter_dstmap}. */
    public static final String NAME = "iomap.iomap_iter_dstmap";

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param iomap the mapping; null records nothing
     */
    public static void emit(IomapInode inode, Iomap iomap) {
        IterDstmapEvent event = new IterDstmapEvent();
        if (iomap == null || !event.shouldCommit()) {
            return;
        }
        event.set(inode, iomap);
        event.commit();
    }
}
