package dev.iomap.core.trace;

import dev.iomap.spi.IomapInode;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** The kernel's {@code iomap_readpage} tracepoint (class {@code iomap_readpage_class}). */
@Name(ReadpageEvent.NAME)
@Label("iomap_readpage")
@Description("A folio is read on demand (the kernel's iomap_read_folio): how many pages it holds.")
@Category({"iomap4j", "iomap"})
@Enabled(false)
@StackTrace(false)
public final class ReadpageEvent extends Event {
    /** The event's name: {@code iomap.iomap_readpage}. */
    public static final String NAME = "iomap.iomap_readpage";

    @Label("ino")
    long ino;

    @Label("nr_pages")
    int nrPages;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param nrPages pages read
     */
    public static void emit(IomapInode inode, int nrPages) {
        ReadpageEvent event = new ReadpageEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.ino = inode.ino();
        event.nrPages = nrPages;
        event.commit();
    }
}
