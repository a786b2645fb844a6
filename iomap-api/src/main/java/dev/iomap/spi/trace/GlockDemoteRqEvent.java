package dev.iomap.spi.trace;

import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * The kernel's {@code gfs2_demote_rq} tracepoint: a holder is asked to go down to a lower mode because
 * another holder wants an incompatible one; {@code remote} when the request came from another node (the
 * kernel's DLM callback), else from another holder in this process. Its uses may defer it.
 */
@Name(GlockDemoteRqEvent.NAME)
@Label("gfs2_demote_rq")
@Description("A glock holder is asked to demote from cur_state to dmt_state for another holder.")
public final class GlockDemoteRqEvent extends GlockEvent {
    /** The event's name: {@code gfs2.gfs2_demote_rq}. */
    public static final String NAME = "gfs2.gfs2_demote_rq";

    @Label("cur_state")
    String curState;

    @Label("dmt_state")
    String dmtState;

    @Label("remote")
    boolean remote;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param node the node's name
     * @param name the glock
     * @param current the mode the holder has
     * @param target the mode it is asked to go to
     * @param remote whether another node asked
     */
    public static void emit(String node, LockName name, LockMode current, LockMode target, boolean remote) {
        GlockDemoteRqEvent event = new GlockDemoteRqEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.set(node, name);
        event.curState = current.name();
        event.dmtState = target.name();
        event.remote = remote;
        event.commit();
    }
}
