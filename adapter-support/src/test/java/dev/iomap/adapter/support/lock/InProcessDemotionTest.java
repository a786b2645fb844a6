package dev.iomap.adapter.support.lock;

import static dev.iomap.spi.lock.LockMode.DF;
import static dev.iomap.spi.lock.LockMode.EX;
import static dev.iomap.spi.lock.LockMode.SH;
import static dev.iomap.spi.lock.LockMode.UN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.spi.lock.DemoteFailedException;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockName;
import dev.iomap.spi.lock.LockStats;
import dev.iomap.spi.lock.LockTimeoutException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Two or three nodes (managers over one lock space) contending for one inode glock. */
class InProcessDemotionTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final LockName INODE = LockName.inode(7);

    private final InProcessLockSpace space = new InProcessLockSpace();
    private final InProcessLockManager nodeA = new InProcessLockManager(space, "A", false);
    private final InProcessLockManager nodeB = new InProcessLockManager(space, "B", false);
    private final InProcessLockManager nodeC = new InProcessLockManager(space, "C", false);
    private final List<String> events = RecordingCallbacks.newEventList();
    private final RecordingCallbacks callbacksA = new RecordingCallbacks("A", events, 5);
    private final RecordingCallbacks callbacksB = new RecordingCallbacks("B", events, 3);

    @Test
    void anExclusiveHolderAskedForSharedSyncsAndStaysASharer() throws Exception {
        LockHandle a = nodeA.acquire(INODE, EX, callbacksA, WAIT);
        a.unlock();

        LockHandle b = nodeB.acquire(INODE, SH, callbacksB, WAIT);
        events.add("B.granted " + b.mode());
        a.lock(SH, Duration.ZERO);   // served from the SH it kept, without demoting B

        assertThat(events).containsExactly("A.sync EX>SH", "B.granted SH");
        assertThat(a.mode()).isEqualTo(SH);
        assertThat(b.mode()).isEqualTo(SH);
        assertThat(nodeA.stats()).isEqualTo(new LockStats(1, 1, 1, 0, 0));
        assertThat(nodeB.stats()).isEqualTo(new LockStats(1, 0, 0, 0, 0));
    }

    @Test
    void anExclusiveRequestWaitsForTheUseThenSyncThenInvalidateBeforeItIsGranted() throws Exception {
        LockHandle a = nodeA.acquire(INODE, EX, callbacksA, WAIT);
        Threads.Running<LockHandle> b = Threads.start("node-B", () -> {
            LockHandle granted = nodeB.acquire(INODE, EX, callbacksB, WAIT);
            events.add("B.granted " + granted.mode());
            return granted;
        });
        Threads.awaitBlocked(b.thread());
        events.add("A.unlock");
        a.unlock();

        LockHandle granted = b.join();

        assertThat(events).containsExactly("A.unlock", "A.sync EX>UN", "A.invalidate EX>UN", "B.granted EX");
        assertThat(a.mode()).isEqualTo(UN);
        assertThat(granted.mode()).isEqualTo(EX);
        assertThat(nodeA.stats()).isEqualTo(new LockStats(1, 0, 1, 0, 5));
        assertThat(nodeB.stats()).isEqualTo(new LockStats(1, 0, 0, 0, 0));
    }

    @Test
    void whileCallbacksRunNobodyElseIsGrantedAndTheHoldersNewUsesWait() throws Exception {
        LockHandle a = nodeA.acquire(INODE, EX, callbacksA, WAIT);
        a.unlock();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        callbacksA.beforeInvalidate = () -> {
            entered.countDown();
            await(proceed);
        };
        Threads.Running<LockHandle> b = Threads.start("node-B", () -> nodeB.acquire(INODE, EX, callbacksB, WAIT));
        assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();

        assertThatThrownBy(() -> nodeC.acquire(INODE, SH, callbacksB, Duration.ZERO))
                .isInstanceOf(LockTimeoutException.class);
        assertThatThrownBy(() -> a.lock(SH, Duration.ZERO)).isInstanceOf(LockTimeoutException.class);
        assertThat(a.mode()).as("the mode changes only after the callbacks return").isEqualTo(EX);
        proceed.countDown();

        assertThat(b.join().mode()).isEqualTo(EX);
        assertThat(events).containsExactly("A.sync EX>UN", "A.invalidate EX>UN");
        assertThat(a.mode()).isEqualTo(UN);
        assertThat(nodeC.stats()).isEqualTo(new LockStats(0, 0, 0, 0, 0));
        assertThat(space.activeNames()).isEqualTo(1);
    }

    @Test
    void aPendingDemotionMakesTheHoldersNewUsesWait() throws Exception {
        LockHandle a = nodeA.acquire(INODE, EX, callbacksA, WAIT);
        Threads.Running<LockHandle> b = Threads.start("node-B", () -> nodeB.acquire(INODE, SH, callbacksB, WAIT));
        Threads.awaitBlocked(b.thread());

        Threads.Running<Void> secondUse = Threads.start("A-second-use", () -> {
            a.lock(SH, Duration.ZERO);
            return null;
        });
        assertThatThrownBy(secondUse::join).isInstanceOf(LockTimeoutException.class);
        a.unlock();

        assertThat(b.join().mode()).isEqualTo(SH);
        assertThat(events).containsExactly("A.sync EX>SH");
    }

    @Test
    void anExclusiveRequestDemotesEverySharerWithoutSync() throws Exception {
        nodeA.acquire(INODE, SH, callbacksA, WAIT).unlock();
        nodeB.acquire(INODE, SH, callbacksB, WAIT).unlock();
        assertThat(events).isEmpty();

        LockHandle c = nodeC.acquire(INODE, EX, new RecordingCallbacks("C", events, 0), WAIT);

        assertThat(events).containsExactly("A.invalidate SH>UN", "B.invalidate SH>UN");
        assertThat(c.mode()).isEqualTo(EX);
        assertThat(nodeA.stats()).isEqualTo(new LockStats(1, 0, 1, 0, 5));
        assertThat(nodeB.stats()).isEqualTo(new LockStats(1, 0, 1, 0, 3));
        assertThat(nodeC.stats()).isEqualTo(new LockStats(1, 0, 0, 0, 0));
    }

    @Test
    void deferredHoldersShareAndAreDemotedForSharedWithoutCallbacks() throws Exception {
        LockHandle a = nodeA.acquire(INODE, DF, callbacksA, WAIT);
        a.unlock();
        LockHandle b = nodeB.acquire(INODE, DF, callbacksB, WAIT);
        b.unlock();

        LockHandle c = nodeC.acquire(INODE, SH, new RecordingCallbacks("C", events, 0), WAIT);

        assertThat(events).as("DF caches nothing and is not EX: no sync, no invalidate").isEmpty();
        assertThat(List.of(a.mode(), b.mode(), c.mode())).containsExactly(UN, UN, SH);
        assertThat(nodeA.stats().demotions()).isEqualTo(1);
        assertThat(nodeB.stats().demotions()).isEqualTo(1);
    }

    @Test
    void anUpgradeFromSharedKeepsTheCacheAndSharedToDeferredDropsIt() throws Exception {
        LockHandle a = nodeA.acquire(INODE, SH, callbacksA, WAIT);
        a.unlock();

        a.lock(EX, WAIT);
        a.unlock();
        assertThat(events).isEmpty();
        a.release();
        LockHandle shared = nodeA.acquire(INODE, SH, callbacksA, WAIT);
        shared.unlock();
        shared.lock(DF, WAIT);

        assertThat(events).containsExactly("A.sync EX>UN", "A.invalidate EX>UN", "A.invalidate SH>UN");
        assertThat(shared.mode()).isEqualTo(DF);
        assertThat(nodeA.stats()).isEqualTo(new LockStats(4, 0, 1, 1, 10));
    }

    @Test
    void aFailedSyncKeepsTheHoldersModeAndFailsTheRequest() throws Exception {
        LockHandle a = nodeA.acquire(INODE, EX, callbacksA, WAIT);
        a.unlock();
        IOException deviceGone = new IOException("device gone");
        callbacksA.beforeSync = () -> {
            throw deviceGone;
        };

        assertThatThrownBy(() -> nodeB.acquire(INODE, EX, callbacksB, WAIT))
                .isInstanceOf(DemoteFailedException.class).hasCause(deviceGone)
                .hasMessageContaining("INODE:7").hasMessageContaining("keeps EX");

        assertThat(events).isEmpty();
        assertThat(a.mode()).isEqualTo(EX);
        assertThat(nodeA.stats()).isEqualTo(new LockStats(1, 0, 0, 0, 0));
        a.lock(EX, Duration.ZERO);
        a.unlock();
        assertThat(space.activeNames()).isEqualTo(1);
    }

    @Test
    void aCallbackThatLocksItsOwnHandleFailsTheDemotionInsteadOfHanging() throws Exception {
        LockHandle a = nodeA.acquire(INODE, EX, callbacksA, WAIT);
        a.unlock();
        callbacksA.beforeSync = () -> a.lock(SH, WAIT);

        assertThatThrownBy(() -> nodeB.acquire(INODE, SH, callbacksB, WAIT))
                .isInstanceOf(DemoteFailedException.class)
                .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("own demote callback");
        assertThat(a.mode()).isEqualTo(EX);
    }

    private static void await(CountDownLatch latch) throws IOException {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IOException("latch never opened");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException();
        }
    }
}
