package dev.iomap.adapter.support.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.IomapException;
import dev.iomap.spi.lock.ClusterContext;
import dev.iomap.spi.lock.ClusterJoin;
import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Slots of an in-process cluster, and its nodes' managers sharing one lock space. */
class InProcessClusterTest {
    private static final ClusterJoin.JournalReplay NO_REPLAY = slot -> {
        throw new AssertionError("no replay expected, asked for slot " + slot);
    };

    @Test
    void nodesGetTheLowestFreeSlotAndAreRefusedWhenAllAreTaken() throws IOException {
        InProcessCluster cluster = new InProcessCluster();
        ClusterContext first = cluster.join("fs", 2, NO_REPLAY);
        ClusterContext second = cluster.join("fs", 2, NO_REPLAY);
        assertThat(List.of(first.journal(), second.journal())).containsExactly(0, 1);
        assertThatThrownBy(() -> cluster.join("fs", 2, NO_REPLAY)).isInstanceOf(IomapException.class)
                .hasMessage("all 2 journals of fs are in use by mounted nodes");
        first.close();
        first.close();
        assertThat(cluster.nodes()).isEqualTo(1);
        ClusterContext third = cluster.join("fs", 2, NO_REPLAY);
        assertThat(third.journal()).isEqualTo(0);
        first.checkWrite();
        second.close();
        third.close();
        assertThat(cluster.nodes()).isZero();
    }

    @Test
    void aNodesLockRequestDemotesAnotherNodesHolder() throws IOException {
        InProcessCluster cluster = new InProcessCluster();
        ClusterContext a = cluster.join("fs", 2, NO_REPLAY);
        ClusterContext b = cluster.join("fs", 2, NO_REPLAY);
        List<String> calls = new ArrayList<>();
        DemoteCallbacks recording = new DemoteCallbacks() {
            @Override
            public void sync(LockName name, LockMode from, LockMode to) {
                calls.add("sync " + name + " " + from + ">" + to);
            }

            @Override
            public long invalidate(LockName name, LockMode from, LockMode to) {
                calls.add("invalidate " + name + " " + from + ">" + to);
                return 0;
            }
        };
        try (var managerA = a.lockManager(); var managerB = b.lockManager()) {
            LockHandle held = managerA.acquire(LockName.inode(7), LockMode.EX, recording, Duration.ofSeconds(10));
            held.unlock();
            LockHandle other = managerB.acquire(LockName.inode(7), LockMode.EX, recording, Duration.ofSeconds(10));
            other.unlock();
            assertThat(calls).containsExactly("sync INODE:7 EX>UN", "invalidate INODE:7 EX>UN");
            assertThat(held.mode()).isEqualTo(LockMode.UN);
        }
        a.close();
        b.close();
    }

    @Test
    void aKilledNodeIsFencedRecoveredByAnotherNodeThenItsGlocksAreDropped() throws IOException {
        InProcessCluster cluster = new InProcessCluster();
        List<String> calls = new ArrayList<>();
        ClusterContext a = cluster.join("fs", 3, slot -> {
            calls.add("replay " + slot + " by A");
            return 0;
        });
        ClusterContext b = cluster.join("fs", 3, slot -> {
            calls.add("replay " + slot + " by B");
            return 0;
        });
        DemoteCallbacks failing = new DemoteCallbacks() {
            @Override
            public void sync(LockName name, LockMode from, LockMode to) {
                throw new AssertionError("a dead node's callbacks never run");
            }

            @Override
            public long invalidate(LockName name, LockMode from, LockMode to) {
                throw new AssertionError("a dead node's callbacks never run");
            }
        };
        LockHandle held = b.lockManager().acquire(LockName.inode(7), LockMode.EX, failing, Duration.ofSeconds(10));
        held.unlock();

        cluster.kill(1);

        assertThat(calls).containsExactly("replay 1 by A");
        assertThatThrownBy(b::checkWrite).isInstanceOf(dev.iomap.api.FileSystemShutdownException.class)
                .hasMessage("node-2 (journal 1) was killed: it writes nothing more to the shared device; unmount it");
        assertThat(cluster.nodes()).isEqualTo(1);
        try (var managerA = a.lockManager()) {
            LockHandle granted = managerA.acquire(LockName.inode(7), LockMode.EX, new RecordingCallbacks("A", calls, 0),
                    Duration.ZERO);
            assertThat(granted.mode()).isEqualTo(LockMode.EX);
            granted.unlock();
        }
        assertThatThrownBy(() -> cluster.kill(0)).isInstanceOf(IllegalStateException.class)
                .hasMessage("no other node is joined to recover slot 0");
        assertThatThrownBy(() -> cluster.kill(2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no node is joined in journal slot 2");
        a.checkWrite();
        a.close();
    }
}
