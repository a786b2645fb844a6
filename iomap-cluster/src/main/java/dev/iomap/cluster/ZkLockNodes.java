package dev.iomap.cluster;

import dev.iomap.spi.lock.LockName;
import java.io.IOException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * The three znodes of one glock, {@code locks/<name>} with its {@code queue} and {@code holders}
 * ({@link ZkPaths}): created together at the glock's first use, deleted together when nobody holds or
 * waits for it, each in one transaction, so that they exist all three or not at all. A request queues
 * before it looks at the holders and stays queued until its grant (which creates its holder entry in
 * the same transaction as it leaves the queue), and a holder's entry stays until it releases: while
 * anybody holds or waits, the deletion fails on a non-empty directory and changes nothing; a request
 * that finds the glock's znodes gone creates them again. So the glocks in ZooKeeper are the ones in
 * use, not every one ever used.
 */
final class ZkLockNodes {
    private ZkLockNodes() {
    }

    /**
     * Creates the glock's znodes (and {@code locks} itself the first time); fine if another node has
     * created them meanwhile.
     *
     * @throws IOException if ZooKeeper failed
     */
    static void create(ZkCalls zk, CuratorFramework client, ZkPaths paths, LockName name) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                zk.call("create the znodes of " + name, () -> client.transaction().forOperations(
                        client.transactionOp().create().forPath(paths.lock(name)),
                        client.transactionOp().create().forPath(paths.queue(name)),
                        client.transactionOp().create().forPath(paths.holders(name))));
                return;
            } catch (KeeperException.NodeExistsException e) {
                return;   // another node created them
            } catch (KeeperException.NoNodeException e) {
                if (attempt > 1) {
                    throw new IOException("cannot create the znodes of glock " + name + ": " + e.getMessage(), e);
                }
                createLocksDirectory(zk, client, paths);
            } catch (KeeperException e) {
                throw new IOException("cannot create the znodes of glock " + name + ": " + e.getMessage(), e);
            }
        }
    }

    private static void createLocksDirectory(ZkCalls zk, CuratorFramework client, ZkPaths paths) throws IOException {
        try {
            zk.call("create " + paths.locks(), () -> client.create().creatingParentsIfNeeded().forPath(paths.locks()));
        } catch (KeeperException.NodeExistsException e) {
            // another node created it
        } catch (KeeperException e) {
            throw new IOException("cannot create " + paths.locks() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Deletes a glock's znodes if its queue and holders are empty, in one transaction that changes
     * nothing if either is not (one round trip).
     *
     * @param lock the glock's znode, {@code locks/<TYPE>-<number>}
     * @return whether they were deleted now
     * @throws IOException if ZooKeeper failed otherwise (unreachable: the znodes stay, which is harmless)
     */
    static boolean deleteIfIdle(ZkCalls zk, CuratorFramework client, String lock) throws IOException {
        try {
            zk.call("delete " + lock + " if idle", () -> client.transaction().forOperations(
                    client.transactionOp().delete().forPath(lock + "/queue"),
                    client.transactionOp().delete().forPath(lock + "/holders"),
                    client.transactionOp().delete().forPath(lock)));
            return true;
        } catch (KeeperException.NotEmptyException | KeeperException.NoNodeException e) {
            return false;   // held or waited for; or deleted already
        } catch (KeeperException e) {
            throw new IOException("cannot delete " + lock + ": " + e.getMessage(), e);
        }
    }
}
