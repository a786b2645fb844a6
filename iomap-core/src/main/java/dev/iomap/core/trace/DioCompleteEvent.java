package dev.iomap.core.trace;

import dev.iomap.spi.IomapInode;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** The kernel's {@code iomap_dio_complete} tracepoint: a direct read or write ends. */
@Name(DioCompleteEvent.NAME)
@Label("iomap_dio_complete")
@Description("A direct read or write ends: the file's size after it, where it started, the error (0 or"
        + " -EIO) and the bytes it transferred.")
@Category({"iomap4j", "iomap"})
@Enabled(false)
@StackTrace(false)
public final class DioCompleteEvent extends Event {
    /** The event's name: {@code iomap.iomap_dio_complete}. */
    public static final String NAME = "iomap.iomap_dio_complete";

    @Label("ino")
    long ino;

    @Label("size")
    long isize;

    @Label("offset")
    long pos;

    @Label("error")
    int error;

    @Label("ret")
    long ret;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param pos where the I/O started
     * @param error 0, or a negative errno ({@code -5}, EIO, for an I/O error)
     * @param ret bytes transferred
     */
    public static void emit(IomapInode inode, long pos, int error, long ret) {
        DioCompleteEvent event = new DioCompleteEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.ino = inode.ino();
        event.isize = inode.size();
        event.pos = pos;
        event.error = error;
        event.ret = ret;
        event.commit();
    }

    /**
     * Records a direct I/O that transferred {@code ret} bytes without an error, and returns them (so
     * that a {@code return} statement is the one line that emits).
     *
     * @param inode the inode
     * @param pos where the I/O started
     * @param ret bytes transferred
     * @return {@code ret}
     */
    public static int emitReturning(IomapInode inode, long pos, int ret) {
        emit(inode, pos, 0, ret);
        return ret;
    }
}
