package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A use that asks for a mode the glock's current mode does not cover, while other uses of the same
 * handle are in progress, waits for them to end before the mode changes, as GFS2 changes a glock's
 * state only with no holder granted. Found by MultiNodeGlockModelTest under load ("invalidate SH>UN of
 * INODE:1 on node 2 while it uses it in SH"): a DF request ran the SH holder's invalidation while
 * another thread of the node still read in SH. A thread inside a use that starts another use never
 * waits behind such a change, which waits for it.
 */
@Timeout(120)
class ZkLockStateChangeTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** How long a nested use may wait: it must not wait at all; a deadlock ends here. */
    private static final Duration NESTED_WAIT = Duration.ofSeconds(5);
    private static final DemoteCallbacks NOTHING = new DemoteCallbacks() {
        @Override
        public void sync(LockName name, LockMode from, LockMode to) {
        }

        @Override
        public long invalidate(LockName name, LockMode from, LockMode to) {
            return 0;
        }
    };
    /** How long the second use gets to (wrongly) change the mode under the first. */
    private static final long GRACE_MILLIS = 1500;

    @ParameterizedTest(name = "{0} then {1}")
    @CsvSource({"SH, DF", "DF, SH"})
    void aChangeOfModeWaitsForTheUsesItDoesNotCover(LockMode first, LockMode second) throws Exception {
        AtomicBoolean firstInUse = new AtomicBoolean();
        List<String> callbacksDuringTheUse = new CopyOnWriteArrayList<>();
        DemoteCallbacks callbacks = new DemoteCallbacks() {
            @Override
            public void sync(LockName name, LockMode from, LockMode to) {
                if (firstInUse.get()) {
                    callbacksDuringTheUse.add("sync " + from + ">" + to);
                }
            }

            @Override
            public long invalidate(LockName name, LockMode from, LockMode to) {
                if (firstInUse.get()) {
                    callbacksDuringTheUse.add("invalidate " + from + ">" + to);
                }
                return 0;
            }
        };
        try (ZkTestServer server = new ZkTestServer();
                ZkLockManager manager = new ZkLockManager(server.client(), UUID.randomUUID(), new Incarnation("n", 1),
                        Fence.manual())) {
            LockHandle handle = manager.acquire(LockName.inode(7), first, callbacks, WAIT);
            firstInUse.set(true);
            Background<LockMode> other = Background.start("second-use", () -> {
                handle.lock(second, WAIT);
                LockMode got = handle.mode();
                handle.unlock();
                return got;
            });
            long deadline = System.nanoTime() + GRACE_MILLIS * 1_000_000;
            while (System.nanoTime() < deadline && callbacksDuringTheUse.isEmpty() && handle.mode() == first) {
                Thread.sleep(10);
            }
            assertThat(callbacksDuringTheUse).as("callbacks while the %s use is in progress", first).isEmpty();
            assertThat(handle.mode()).as("the mode under the %s use", first).isEqualTo(first);
            firstInUse.set(false);
            handle.unlock();
            assertThat(other.join()).as("the second use's mode, once the first ended").isEqualTo(second);
            handle.release();
        }
    }

    /**
     * One thread reads in SH; another asks for DF and waits for the read to end; the reader starts a
     * nested use in SH (covered) and then asks for EX inside it. Neither waits for the change that waits
     * for it: waiting with new uses blocked, as a change that waited for every use in progress did,
     * deadlocked until the nested use's timeout.
     */
    @Test
    void aNestedUseDoesNotWaitForTheChangeThatWaitsForItsThread() throws Exception {
        try (ZkTestServer server = new ZkTestServer();
                ZkLockManager manager = new ZkLockManager(server.client(), UUID.randomUUID(), new Incarnation("n", 1),
                        Fence.manual())) {
            LockHandle handle = manager.acquire(LockName.inode(7), LockMode.SH, NOTHING, WAIT);
            Background<LockMode> direct = Background.start("df-use", () -> {
                handle.lock(LockMode.DF, WAIT);
                LockMode got = handle.mode();
                handle.unlock();
                return got;
            });
            awaitWaiting(direct.thread());

            handle.lock(LockMode.SH, NESTED_WAIT);   // covered by SH: at once
            assertThat(handle.holds()).as("the reader's two uses").isEqualTo(2);
            assertThat(handle.mode()).as("the mode while the reader is in SH").isEqualTo(LockMode.SH);
            handle.lock(LockMode.EX, NESTED_WAIT);   // not covered: lets the DF change go first, then upgrades
            assertThat(handle.mode()).isEqualTo(LockMode.EX);
            handle.unlock();
            handle.unlock();
            handle.unlock();
            // EX, if the reader's upgrade (which covers the DF use) came before the DF use looked
            assertThat(direct.join()).as("the DF use's mode").isIn(LockMode.DF, LockMode.EX);
            assertThat(handle.holds()).isZero();
            handle.release();
        }
    }

    /** Spins until {@code thread} waits on a condition (the change waiting for the uses), at most 30 s. */
    private static void awaitWaiting(Thread thread) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (thread.getState() != Thread.State.TIMED_WAITING && thread.getState() != Thread.State.WAITING) {
            assertThat(thread.getState()).as("the DF use's thread").isNotEqualTo(Thread.State.TERMINATED);
            assertThat(System.nanoTime()).as("the DF use waited within 30 s").isLessThan(deadline);
            Thread.onSpinWait();
        }
    }
}
