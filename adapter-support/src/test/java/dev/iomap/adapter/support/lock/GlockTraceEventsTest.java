package dev.iomap.adapter.support.lock;

import static dev.iomap.spi.lock.LockMode.EX;
import static dev.iomap.spi.lock.LockMode.SH;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockName;
import dev.iomap.spi.trace.GlockDemoteRqEvent;
import dev.iomap.spi.trace.GlockPromoteEvent;
import dev.iomap.spi.trace.GlockStateChangeEvent;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * gfs2's glock tracepoints as JFR events (issue 41 item 1): a grant is a promotion and a state change, a
 * conflicting request from another node is a remote demote request, and the holder's demotion a state
 * change, in that order.
 */
class GlockTraceEventsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    void anotherNodesSharedRequestDemotesTheExclusiveHolderAndPromotesTheRequester() throws Exception {
        InProcessLockSpace space = new InProcessLockSpace();
        InProcessLockManager nodeA = new InProcessLockManager(space, "A", false);
        InProcessLockManager nodeB = new InProcessLockManager(space, "B", false);
        List<String> log = RecordingCallbacks.newEventList();
        Path file = dir.resolve("glocks.jfr");
        try (Recording recording = new Recording()) {
            List.of(GlockStateChangeEvent.NAME, GlockDemoteRqEvent.NAME, GlockPromoteEvent.NAME)
                    .forEach(recording::enable);
            recording.start();
            LockHandle a = nodeA.acquire(LockName.inode(7), EX, new RecordingCallbacks("A", log, 1), WAIT);
            a.unlock();
            LockHandle b = nodeB.acquire(LockName.inode(7), SH, new RecordingCallbacks("B", log, 1), WAIT);
            b.unlock();
            recording.stop();
            recording.dump(file);
        }

        List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().startsWith("gfs2."))
                .sorted(Comparator.comparing(RecordedEvent::getStartTime)).toList();
        assertThat(events).extracting(GlockTraceEventsTest::line).containsExactly(
                "gfs2_glock_state_change A INODE:7 UN>EX",
                "gfs2_promote A INODE:7 EX",
                "gfs2_demote_rq A INODE:7 EX>SH remote",
                "gfs2_glock_state_change A INODE:7 EX>SH",
                "gfs2_glock_state_change B INODE:7 UN>SH",
                "gfs2_promote B INODE:7 SH");
        assertThat(events.get(1).getDuration("waitNanos").isNegative()).isFalse();
    }

    private static String line(RecordedEvent e) {
        String head = e.getEventType().getLabel() + " " + e.getString("node") + " " + e.getString("glType") + ":"
                + e.getLong("glNumber") + " ";
        return head + switch (e.getEventType().getLabel()) {
            case "gfs2_glock_state_change" -> e.getString("curState") + ">" + e.getString("newState");
            case "gfs2_promote" -> e.getString("state");
            default -> e.getString("curState") + ">" + e.getString("dmtState") + (e.getBoolean("remote") ? " remote" : "");
        };
    }
}
