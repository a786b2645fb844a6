package dev.iomap.core.trace;

import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapRequest;
import java.util.Set;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * The kernel's {@code iomap_iter} tracepoint: one step of an iteration over an inode's mappings, before
 * the previous mapping ends and the next begins. No {@code ops} or {@code caller}: a Java stack trace
 * would say that, and these events record none.
 */
@Name(IterEvent.NAME)
@Label("iomap_iter")
@Description("One step of an iteration over an inode's mappings: where it stands, how much of the current"
        + " mapping is left, how many bytes the last step processed, and why it iterates.")
@Category({"iomap4j", "iomap"})
@Enabled(false)
@StackTrace(false)
public final class IterEvent extends Event {
    /** The event's name: {@code iomap.iomap_iter}. */
    public static final String NAME = "iomap.iomap_iter";

    @Label("ino")
    long ino;

    @Label("pos")
    long pos;

    @Label("length")
    long length;

    @Label("status")
    long status;

    @Label("flags")
    String flags;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param pos the iteration's position
     * @param length bytes of the current mapping left ({@code iomap_length}), 0 before the first
     * @param status bytes the last step processed (the kernel's {@code iter->status} once advanced)
     * @param request why it iterates: WRITE, ZERO, REPORT, ... (the kernel's {@code IOMAP_*} flags)
     */
    public static void emit(IomapInode inode, long pos, long length, long status, Set<IomapRequest> request) {
        IterEvent event = new IterEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.ino = inode.ino();
        event.pos = pos;
        event.length = length;
        event.status = status;
        event.flags = TraceNames.flags(request);
        event.commit();
    }
}
