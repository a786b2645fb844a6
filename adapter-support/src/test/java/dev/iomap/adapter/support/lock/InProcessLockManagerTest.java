package dev.iomap.adapter.support.lock;

import static dev.iomap.spi.lock.LockMode.EX;
import static dev.iomap.spi.lock.LockMode.SH;
import static dev.iomap.spi.lock.LockMode.UN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockName;
import dev.iomap.spi.lock.LockOrderException;
import dev.iomap.spi.lock.LockStats;
import dev.iomap.spi.lock.LockTimeoutException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Timeouts, interrupts, release, close and the lock order check of the in-process manager. */
class InProcessLockManagerTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final LockName INODE = LockName.inode(7);

    private final InProcessLockSpace space = new InProcessLockSpace();
    private final InProcessLockManager nodeA = new InProcessLockManager(space, "A", false);
    private final InProcessLockManager nodeB = new InProcessLockManager(space, "B", false);
    private final List<String> events = RecordingCallbacks.newEventList();
    private final RecordingCallbacks callbacksA = new RecordingCallbacks("A", events, 5);
    private final RecordingCallbacks callbacksB = new RecordingCallbacks("B", events, 3);

    @Test
    void aTimedOutRequestLeavesNothingGrantedAndNoDemotionPending() throws Exception {
        LockHandle a = nodeA.acquire(INODE, EX, callbacksA, WAIT);

        assertThatThrownBy(() -> nodeB.acquire(INODE, EX, callbacksB, Duration.ofMillis(50)))
                .isInstanceOf(LockTimeoutException.class).hasMessageContaining("INODE:7");
        a.unlock();
        a.lock(EX, Duration.ZERO);

        assertThat(events).isEmpty();
        assertThat(a.mode()).isEqualTo(EX);
        assertThat(nodeA.stats()).isEqualTo(new LockStats(1, 1, 0, 0, 0));
        assertThat(nodeB.stats()).isEqualTo(new LockStats(0, 0, 0, 0, 0));
        assertThat(space.activeNames()).isEqualTo(1);
    }

    @Test
    void lockIfCachedStartsAUseOnlyOnACoveringModeWithNoDemotionPendingAndRunsNoCallbacks() throws Exception {
        LockHandle a = nodeA.acquire(INODE, SH, callbacksA, WAIT);
        a.unlock();

        assertThat(a.lockIfCached(SH)).as("cached SH covers SH").isTrue();
        assertThat(a.holds()).isEqualTo(1);
        assertThat(a.lockIfCached(EX)).as("SH does not cover EX; nothing asked of the manager").isFalse();
        assertThat(a.mode()).isEqualTo(SH);
        var b = Threads.start("node-B", () -> nodeB.acquire(INODE, EX, callbacksB, WAIT));
        Threads.awaitBlocked(b.thread());
        assertThat(a.lockIfCached(SH)).as("a demotion is pending").isFalse();
        assertThat(a.holds()).isEqualTo(1);
        a.unlock();
        LockHandle onB = b.join();
        assertThat(a.lockIfCached(SH)).as("demoted to UN: nothing cached").isFalse();
        assertThat(events).containsExactly("A.invalidate SH>UN");
        assertThatThrownBy(() -> onB.lockIfCached(UN)).isInstanceOf(IllegalArgumentException.class);
        onB.unlock();
    }

    @Test
    void anInterruptedRequestFailsWithTheInterruptStatusSet() throws Exception {
        LockHandle a = nodeA.acquire(INODE, EX, callbacksA, WAIT);
        Threads.Running<Boolean> b = Threads.start("node-B", () -> {
            try {
                nodeB.acquire(INODE, SH, callbacksB, WAIT);
                return false;
            } catch (InterruptedIOException expected) {
                return Thread.currentThread().isInterrupted();
            }
        });
        Threads.awaitBlocked(b.thread());

        b.thread().interrupt();

        assertThat(b.join()).as("interrupt status set again").isTrue();
        a.unlock();
        assertThat(events).isEmpty();
        assertThat(a.mode()).isEqualTo(EX);
    }

    @Test
    void releaseSyncsInvalidatesAndForgetsTheName() throws Exception {
        LockHandle a = nodeA.acquire(INODE, EX, callbacksA, WAIT);
        assertThatThrownBy(a::release).isInstanceOf(IllegalStateException.class).hasMessageContaining("1 use");
        a.unlock();

        a.release();

        assertThat(events).containsExactly("A.sync EX>UN", "A.invalidate EX>UN");
        assertThat(a.mode()).isEqualTo(UN);
        assertThat(nodeA.stats()).isEqualTo(new LockStats(1, 0, 0, 1, 5));
        assertThat(space.activeNames()).isZero();
        assertThatThrownBy(() -> a.lock(SH, WAIT)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("released");
        assertThatThrownBy(a::unlock).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(a::release).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void unlockWithoutAUseAndUnlockedModeRequestsAreRefused() throws Exception {
        LockHandle a = nodeA.acquire(INODE, SH, callbacksA, WAIT);
        a.unlock();

        assertThatThrownBy(a::unlock).isInstanceOf(IllegalStateException.class).hasMessageContaining("more often");
        assertThatThrownBy(() -> a.lock(UN, WAIT)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> nodeB.acquire(INODE, UN, callbacksB, WAIT))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> nodeB.acquire(INODE, SH, callbacksB, Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(space.activeNames()).isEqualTo(1);
    }

    @Test
    void closeReleasesEveryHandleAndRefusesWhileOneIsHeld() throws Exception {
        LockHandle inode = nodeA.acquire(INODE, EX, callbacksA, WAIT);
        LockHandle rgrp = nodeA.acquire(LockName.rgrp(1), SH, callbacksA, WAIT);
        rgrp.unlock();
        assertThatThrownBy(nodeA::close).isInstanceOf(IllegalStateException.class).hasMessageContaining("INODE:7");
        assertThat(events).isEmpty();
        inode.unlock();

        nodeA.close();
        nodeA.close();

        assertThat(events).containsExactly("A.sync EX>UN", "A.invalidate EX>UN", "A.invalidate SH>UN");
        assertThat(nodeA.stats()).isEqualTo(new LockStats(2, 0, 0, 2, 10));
        assertThat(space.activeNames()).isZero();
        assertThatThrownBy(() -> nodeA.acquire(INODE, SH, callbacksA, WAIT))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void theOrderCheckRefusesALockThatComesBeforeOneHeld() throws Exception {
        InProcessLockManager checked = new InProcessLockManager(space, "checked", true);
        LockHandle inode5 = checked.acquire(LockName.inode(5), EX, callbacksA, WAIT);
        LockHandle rgrp = checked.acquire(LockName.rgrp(0), EX, callbacksA, WAIT);

        assertThatThrownBy(() -> checked.acquire(LockName.inode(3), EX, callbacksA, WAIT))
                .isInstanceOf(LockOrderException.class).hasMessageContaining("INODE:3")
                .hasMessageContaining("while holding INODE:5");
        assertThatThrownBy(() -> checked.acquire(LockName.rename(), EX, callbacksA, WAIT))
                .isInstanceOf(LockOrderException.class);
        rgrp.unlock();
        inode5.unlock();
        LockHandle inode3 = checked.acquire(LockName.inode(3), EX, callbacksA, WAIT);
        inode5.lock(EX, WAIT);

        assertThat(List.of(inode3.holds(), inode5.holds(), rgrp.holds())).containsExactly(1, 1, 0);
        assertThat(space.activeNames()).as("the refused requests left nothing behind").isEqualTo(3);
    }

    @Test
    void theSingleNodeDefaultGrantsWithoutDemotingAnyone() throws Exception {
        InProcessLockManager single = new InProcessLockManager();
        LockHandle inode = single.acquire(INODE, EX, callbacksA, Duration.ZERO);
        inode.unlock();
        inode.lock(SH, Duration.ZERO);
        inode.unlock();

        single.close();

        assertThat(single.stats()).isEqualTo(new LockStats(1, 1, 0, 1, 5));
        assertThat(events).containsExactly("A.sync EX>UN", "A.invalidate EX>UN");
    }
}
