package dev.iomap.core.trace;

import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * The kernel's {@code iomap_add_to_ioend} tracepoint (was {@code iomap_writepage_map}): a run of dirty
 * blocks of a folio under writeback, with the mapping the adapter's {@code writebackRange} (the
 * kernel's {@code ->writeback_range}) passed to {@code addToIoend}, added to an ioend.
 */
@Name(AddToIoendEvent.NAME)
@Label("iomap_add_to_ioend")
@Description("A run of dirty blocks is mapped for writeback and added to an ioend: its file position and"
        + " length, and the mapping it went to.")
@Category({"iomap4j", "iomap"})
@Enabled(false)
@StackTrace(false)
public final class AddToIoendEvent extends Event {
    /** The event's name: {@code iomap.iomap_add_to_ioend}. */
    public static final String NAME = "iomap.iomap_add_to_ioend";

    @Label("ino")
    long ino;

    @Label("pos")
    long pos;

    @Label("dirty_len")
    long dirtyLen;

    @Label("addr")
    long addr;

    @Label("offset")
    long offset;

    @Label("length")
    long length;

    @Label("type")
    String type;

    @Label("flags")
    String flags;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param pos the run's first byte in the file
     * @param dirtyLen the bytes of the run that go into the ioend
     * @param iomap the mapping the run goes to
     */
    public static void emit(IomapInode inode, long pos, long dirtyLen, Iomap iomap) {
        AddToIoendEvent event = new AddToIoendEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.ino = inode.ino();
        event.pos = pos;
        event.dirtyLen = dirtyLen;
        event.addr = iomap.address();
        event.offset = iomap.offset();
        event.length = iomap.length();
        event.type = iomap.type().name();
        event.flags = TraceNames.flags(iomap.flags());
        event.commit();
    }
}
