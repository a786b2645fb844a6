package dev.iomap.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Incarnations in ZooKeeper ({@link ZkPaths}): {@code incarnations} holds the last number given out,
 * {@code nodes/<node>} (ephemeral, data the number and a random tag of the claim) is the node id's live
 * incarnation, alive exactly as long as that mount's session. An incarnation is <i>live</i> while {@code nodes/<node>} holds its
 * number; once not, it never is again (numbers are not reused, and the znode is created with its
 * number in one transaction). A dead incarnation is <i>stale</i> if no journal marker names it either:
 * its journal is clean or recovered, so nothing it holds protects anything.
 */
final class ZkIncarnations {
    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    private ZkIncarnations() {
    }

    /**
     * Claims node id {@code nodeId} for a new incarnation: in one transaction, bumps the counter and
     * creates {@code nodes/<node>} with its number (two round trips; more the first time, or when
     * another node joins at the same moment). Refused, changing nothing, while a live incarnation holds
     * the id. A transaction of this call that reached the server although its reply was lost (Curator
     * retries it after a lost connection, and the retry finds the counter moved) is recognised by the
     * claim's random tag in the znode.
     *
     * @return the new incarnation
     * @throws NodeIdInUseException if a live incarnation holds the id
     * @throws IOException if ZooKeeper failed
     */
    static Incarnation claim(ZkCalls zk, CuratorFramework client, ZkPaths paths, String nodeId) throws IOException {
        String node = paths.node(nodeId);
        String tag = Long.toHexString(RANDOM.nextLong());
        while (true) {
            Stat counter = new Stat();
            byte[] last = read(zk, client, paths.incarnations(), counter);
            if (last == null) {
                createIfAbsent(zk, client, paths.incarnations(), "0");
                continue;
            }
            long number = Long.parseLong(new String(last, StandardCharsets.UTF_8)) + 1;
            byte[] counted = Long.toString(number).getBytes(StandardCharsets.UTF_8);
            byte[] claimed = (number + " " + tag).getBytes(StandardCharsets.UTF_8);
            try {
                zk.call("claim node id " + nodeId, () -> client.transaction().forOperations(
                        client.transactionOp().setData().withVersion(counter.getVersion())
                                .forPath(paths.incarnations(), counted),
                        client.transactionOp().create().withMode(CreateMode.EPHEMERAL).forPath(node, claimed)));
                return new Incarnation(nodeId, number);
            } catch (KeeperException.BadVersionException e) {
                // another node joined meanwhile: take the next number
            } catch (KeeperException.NoNodeException e) {
                createIfAbsent(zk, client, paths.nodes(), "");
            } catch (KeeperException.NodeExistsException e) {
                Stat held = new Stat();
                byte[] holder = read(zk, client, node, held);
                if (holder != null) {
                    String[] fields = new String(holder, StandardCharsets.UTF_8).split(" ");
                    Incarnation live = new Incarnation(nodeId, Long.parseLong(fields[0]));
                    if (fields.length > 1 && fields[1].equals(tag)) {
                        return live;   // this call's own transaction, whose reply was lost
                    }
                    throw new NodeIdInUseException(live, Instant.ofEpochMilli(held.getCtime()));
                }
                // its session ended just now: try again
            } catch (KeeperException e) {
                throw new IOException("cannot claim node id " + nodeId + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * @return whether {@code incarnation} is its node id's live incarnation now (one round trip)
     * @throws IOException if ZooKeeper failed
     */
    static boolean isLive(ZkCalls zk, CuratorFramework client, ZkPaths paths, Incarnation incarnation)
            throws IOException {
        byte[] claim = read(zk, client, paths.node(incarnation.nodeId()), new Stat());
        return claim != null
                && new String(claim, StandardCharsets.UTF_8).split(" ")[0].equals(Long.toString(incarnation.number()));
    }

    /**
     * @return the incarnations the journal markers name now: those whose journals are in use or wait
     *     for their recovery (a round trip per journal in use)
     * @throws IOException if ZooKeeper failed, or a marker names no incarnation
     */
    static Set<Incarnation> inJournals(ZkCalls zk, CuratorFramework client, ZkPaths paths) throws IOException {
        Set<Incarnation> named = new HashSet<>();
        List<String> slots;
        try {
            slots = zk.call("list journals", () -> client.getChildren().forPath(paths.journals()));
        } catch (KeeperException.NoNodeException e) {
            return named;
        } catch (KeeperException e) {
            throw new IOException("cannot list " + paths.journals() + ": " + e.getMessage(), e);
        }
        for (String slot : slots) {
            Incarnation marker = marker(zk, client, paths, Integer.parseInt(slot));
            if (marker != null) {
                named.add(marker);
            }
        }
        return named;
    }

    /**
     * @return the incarnation journal {@code slot}'s marker names, or null if there is none
     * @throws IOException if ZooKeeper failed, or the marker names no incarnation (written by an
     *     older version, whose state is under another key: see the module README)
     */
    static Incarnation marker(ZkCalls zk, CuratorFramework client, ZkPaths paths, int slot) throws IOException {
        byte[] data = read(zk, client, paths.journal(slot), new Stat());
        if (data == null) {
            return null;
        }
        String text = new String(data, StandardCharsets.UTF_8);
        Incarnation incarnation = Incarnation.parseOrNull(text);
        if (incarnation == null) {
            throw new IOException("the marker of journal " + slot + " names '" + text + "', not an incarnation"
                    + " <node>.<number>: was it written by another program? Stop every node, and delete "
                    + paths.journal(slot) + " after replaying that journal");
        }
        return incarnation;
    }

    /**
     * Whether {@code incarnation} is dead and no journal marker names it. The markers are read before
     * the liveness: an incarnation creates its marker while live, and once dead never again, so one
     * found dead afterwards had no marker then either.
     *
     * @throws IOException if ZooKeeper failed
     */
    static boolean isStale(ZkCalls zk, CuratorFramework client, ZkPaths paths, Incarnation incarnation)
            throws IOException {
        return !inJournals(zk, client, paths).contains(incarnation) && !isLive(zk, client, paths, incarnation);
    }

    /** @return the znode's data (its stat into {@code stat}), or null if it does not exist */
    static byte[] read(ZkCalls zk, CuratorFramework client, String path, Stat stat) throws IOException {
        try {
            return zk.call("read " + path, () -> client.getData().storingStatIn(stat).forPath(path));
        } catch (KeeperException.NoNodeException e) {
            return null;
        } catch (KeeperException e) {
            throw new IOException("cannot read " + path + ": " + e.getMessage(), e);
        }
    }

    private static void createIfAbsent(ZkCalls zk, CuratorFramework client, String path, String data)
            throws IOException {
        try {
            zk.call("create " + path, () -> client.create().creatingParentsIfNeeded()
                    .forPath(path, data.getBytes(StandardCharsets.UTF_8)));
        } catch (KeeperException.NodeExistsException e) {
            // another node created it
        } catch (KeeperException e) {
            throw new IOException("cannot create " + path + ": " + e.getMessage(), e);
        }
    }
}
