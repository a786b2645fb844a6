package dev.iomap.cluster;

import dev.iomap.spi.lock.LockName;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
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
 *
 * <p>It follows that a glock whose znodes do not exist has no holder and no waiter anywhere: a request
 * that creates them may create its own holder entry in the same transaction ({@link #createHeld}), granted
 * without queueing. Another node's request that comes later finds the znodes and queues as usual.
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

    /**
     * A glock to create held ({@link #createHeld}).
     *
     * @param name the glock
     * @param entry its holder entry's name ({@code <holder>=<MODE>})
     */
    record Held(LockName name, String entry) {
    }

    /**
     * Creates the znodes of every glock of {@code glocks}, each with its holder entry, in one transaction,
     * if none of them exists: each holder is granted, as nobody can hold or wait for a glock without its
     * znodes. All or nothing: if one glock's znodes exist, nothing is created. Sent as one request with no
     * retry (a retry after a lost reply would find the znodes of its own first try and report them as
     * another node's): after a connection loss or an interrupt the outcome is unknown, and the caller
     * finds out ({@code exists} of the entries on the same session) and undoes it.
     *
     * @param glocks the glocks and their holder entries
     * @return whether they were created held; false if the znodes of one of them exist (the caller queues)
     * @throws KeeperException a connection loss and the like: the outcome is unknown
     * @throws IOException if ZooKeeper failed otherwise
     */
    static boolean createHeld(ZkCalls zk, CuratorFramework client, ZkPaths paths, List<Held> glocks)
            throws KeeperException, IOException {
        String what = "create " + glocks + " held";
        for (int attempt = 1; ; attempt++) {
            try {
                zk.call(what, () -> {
                    List<CuratorOp> ops = new ArrayList<>();
                    for (Held g : glocks) {
                        ops.add(client.transactionOp().create().forPath(paths.lock(g.name())));
                        ops.add(client.transactionOp().create().forPath(paths.queue(g.name())));
                        ops.add(client.transactionOp().create().forPath(paths.holders(g.name())));
                        ops.add(client.transactionOp().create().forPath(paths.holders(g.name()) + "/" + g.entry()));
                    }
                    return client.getZookeeperClient().getZooKeeper()
                            .multi(ops.stream().map(CuratorOp::get).toList());
                });
                return true;
            } catch (KeeperException.NodeExistsException e) {
                return false;
            } catch (KeeperException.NoNodeException e) {
                if (attempt > 1) {
                    throw new IOException("cannot " + what + ": " + e.getMessage(), e);
                }
                createLocksDirectory(zk, client, paths);
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
