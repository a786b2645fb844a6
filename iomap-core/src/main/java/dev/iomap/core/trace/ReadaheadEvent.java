package dev.iomap.core.trace;

import dev.iomap.core.mm.Folio;
import dev.iomap.spi.IomapInode;
import java.util.List;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** The kernel's {@code iomap_readahead} tracepoint (class {@code iomap_readpage_class}). */
@Name(ReadaheadEvent.NAME)
@Label("iomap_readahead")
@Description("A readahead window is read (the kernel's iomap_readahead): how many pages it holds.")
@Category({"iomap4j", "iomap"})
@Enabled(false)
@StackTrace(false)
public final class ReadaheadEvent extends Event {
    /** The event's name: {@code iomap.iomap_readahead}. */
    public static final String NAME = "iomap.iomap_readahead";

    @Label("ino")
    long ino;

    @Label("nr_pages")
    int nrPages;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param folios the folios of the window, to be read
     */
    public static void emit(IomapInode inode, List<Folio> folios) {
        ReadaheadEvent event = new ReadaheadEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.ino = inode.ino();
        int pages = 0;
        for (Folio folio : folios) {
            pages += 1 << folio.order();
        }
        event.nrPages = pages;
        event.commit();
    }
}
