package dev.iomap.core.trace;

import dev.iomap.spi.IomapInode;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * The kernel's {@code iomap_dio_rw_begin} tracepoint: a direct read or write starts. No {@code ki_flags}
 * or {@code aio}: the direct path here is synchronous; {@code dio_flags} is {@code WRITE} or empty.
 */
@Name(DioRwBeginEvent.NAME)
@Label("iomap_dio_rw_begin")
@Description("A direct read or write starts: the file's size, where, how many bytes, and whether it writes.")
@Category({"iomap4j", "iomap"})
@Enabled(false)
@StackTrace(false)
public final class DioRwBeginEvent extends Event {
    /** The event's name: {@code iomap.iomap_dio_rw_begin}. */
    public static final String NAME = "iomap.iomap_dio_rw_begin";

    @Label("ino")
    long ino;

    @Label("size")
    long isize;

    @Label("offset")
    long pos;

    @Label("length")
    long count;

    @Label("done_before")
    long doneBefore;

    @Label("dio_flags")
    String dioFlags;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param pos where the I/O starts
     * @param count its length in bytes
     * @param write whether it writes
     */
    public static void emit(IomapInode inode, long pos, long count, boolean write) {
        DioRwBeginEvent event = new DioRwBeginEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.ino = inode.ino();
        event.isize = inode.size();
        event.pos = pos;
        event.count = count;
        event.doneBefore = 0;
        event.dioFlags = write ? "WRITE" : "";
        event.commit();
    }
}
