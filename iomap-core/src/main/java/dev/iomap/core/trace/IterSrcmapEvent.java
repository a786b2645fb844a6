package dev.iomap.core.trace;

import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** The kernel's {@code iomap_iter_srcmap} tracepoint (class {@code iomap_class}). */
@Name(IterSrcmapEvent.NAME)
@Label("iomap_iter_srcmap")
@Description("The source mapping an adapter's begin returned beside the destination (copy on write: where the old data is read).")
public final class IterSrcmapEvent extends IomapMappingEvent {
    /** The event's name: {@code iomap.iomap_iter_srcmap}. */
    public static final String NAME = "iomap.iomap_iter_srcmap";

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param iomap the mapping; null records nothing
     */
    public static void emit(IomapInode inode, Iomap iomap) {
        IterSrcmapEvent event = new IterSrcmapEvent();
        if (iomap == null || !event.shouldCommit()) {
            return;
        }
        event.set(inode, iomap);
        event.commit();
    }
}
