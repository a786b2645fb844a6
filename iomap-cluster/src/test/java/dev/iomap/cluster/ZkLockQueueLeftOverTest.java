package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A lock request's queue entry is an ephemeral sequential znode; a create whose reply a connection loss
 * cut off may have reached the server all the same, and Curator's retry then makes a second entry of the
 * same request. The first one stands before it in the queue for the session's life. Found by
 * Gfs2ZkEnsembleTest: a lookup's request after the quorum came back waited behind its own
 * {@code q-node-a.1.1-3-0000000005} (its entry was {@code ...-3-0000000006}) until the glock timeout. The
 * request deletes its handle's left-over entries and is granted.
 */
@Timeout(60)
class ZkLockQueueLeftOverTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final DemoteCallbacks NOTHING = new DemoteCallbacks() {
        @Override
        public void sync(LockName name, LockMode from, LockMode to) {
        }

        @Override
        public long invalidate(LockName name, LockMode from, LockMode to) {
            return 0;
        }
    };

    @Test
    void aRequestIsGrantedDespiteAnEntryItsLostCreateLeftAheadOfIt() throws Exception {
        UUID filesystem = UUID.randomUUID();
        Incarnation self = new Incarnation("n", 1);
        LockName name = LockName.inode(7);
        try (ZkTestServer server = new ZkTestServer();
                ZkLockManager manager = new ZkLockManager(server.client(), filesystem, self, Fence.manual())) {
            LockHandle handle = manager.acquire(name, LockMode.SH, NOTHING, WAIT);   // request 1 of handle 1
            handle.unlock();
            // What the first try of request 2's create left when its reply was lost: the same name, ahead.
            CuratorFramework client = server.client();
            String queue = new ZkPaths(filesystem).queue(name);
            String holder = ZkPaths.holderId(self, 1);
            String leftOver = client.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(queue + "/q-" + holder + "-2-", (holder + " EX").getBytes(StandardCharsets.UTF_8));

            handle.lock(LockMode.EX, WAIT);

            assertThat(handle.mode()).isEqualTo(LockMode.EX);
            assertThat(client.checkExists().forPath(leftOver)).as("the left-over entry").isNull();
            assertThat(client.getChildren().forPath(queue)).as("the queue once granted").isEmpty();
            handle.unlock();
            handle.release();
        }
    }
}
