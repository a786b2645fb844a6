package dev.iomap.spi.trace;

import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Timespan;

/**
 * The kernel's {@code gfs2_promote} tracepoint: a holder was granted the mode it asked for, after the
 * lock manager had to act (a use served from a mode the node kept is no promotion). {@code wait} is how
 * long the request waited for the grant (the kernel reports that with {@code gfs2_glock_lock_time}).
 */
@Name(GlockPromoteEvent.NAME)
@Label("gfs2_promote")
@Description("A glock holder was granted state, after waiting wait for it.")
public final class GlockPromoteEvent extends GlockEvent {
    /** The event's name: {@code gfs2.gfs2_promote}. */
    public static final String NAME = "gfs2.gfs2_promote";

    @Label("state")
    String state;

    @Label("wait")
    @Timespan(Timespan.NANOSECONDS)
    long waitNanos;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param node the node's name
     * @param name the glock
     * @param state the mode granted
     * @param waitNanos how long the request waited, in nanoseconds
     */
    public static void emit(String node, LockName name, LockMode state, long waitNanos) {
        GlockPromoteEvent event = new GlockPromoteEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.set(node, name);
        event.state = state.name();
        event.waitNanos = waitNanos;
        event.commit();
    }
}
