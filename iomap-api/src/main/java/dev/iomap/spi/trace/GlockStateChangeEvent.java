package dev.iomap.spi.trace;

import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * The kernel's {@code gfs2_glock_state_change} tracepoint: a holder's mode changed, up (a grant) or down
 * (a demotion or release, after its callbacks ran). No {@code tgt_state}, {@code dmt_state} or
 * {@code flags}: a lock manager here changes the mode in one step.
 */
@Name(GlockStateChangeEvent.NAME)
@Label("gfs2_glock_state_change")
@Description("A glock holder's mode changed: from cur_state to new_state.")
public final class GlockStateChangeEvent extends GlockEvent {
    /** The event's name: {@code gfs2.gfs2_glock_state_change}. */
    public static final String NAME = "gfs2.gfs2_glock_state_change";

    @Label("cur_state")
    String curState;

    @Label("new_state")
    String newState;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param node the node's name
     * @param name the glock
     * @param from the mode it had
     * @param to the mode it has now
     */
    public static void emit(String node, LockName name, LockMode from, LockMode to) {
        GlockStateChangeEvent event = new GlockStateChangeEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.set(node, name);
        event.curState = from.name();
        event.newState = to.name();
        event.commit();
    }
}
