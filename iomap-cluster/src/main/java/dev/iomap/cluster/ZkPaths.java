package dev.iomap.cluster;

import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.util.Objects;
import java.util.UUID;

/**
 * Where one filesystem's cluster state lives in ZooKeeper, all under {@code /iomap4j/<uuid>}:
 * <pre>
 *   locks/&lt;TYPE&gt;-&lt;number&gt;/queue/q-&lt;seq&gt;       ephemeral sequential: requests in arrival order
 *   locks/&lt;TYPE&gt;-&lt;number&gt;/holders/&lt;holder&gt;=&lt;MODE&gt; persistent: who has the glock in which mode
 *   demote/&lt;node&gt;/&lt;holder&gt;=&lt;MODE&gt;@&lt;q&gt;            ephemeral: "demote holder to MODE", by request q
 *   members/&lt;slot&gt;                                 ephemeral: the mount that owns journal slot
 *   journals/&lt;slot&gt;                                persistent: the journal is in use by (data) node
 *   recovery/&lt;slot&gt;                                lock znodes of the journal's recovery lock
 * </pre>
 * A holder is {@code <node>.<seq>}: the node's id and the handle's number on that node. Holder znodes
 * are persistent on purpose: a dead node's glocks stay held until a survivor recovered its journal.
 */
final class ZkPaths {
    private final String root;

    /** @param filesystem the filesystem's uuid */
    ZkPaths(UUID filesystem) {
        this.root = "/iomap4j/" + Objects.requireNonNull(filesystem, "filesystem");
    }

    String root() {
        return root;
    }

    String locks() {
        return root + "/locks";
    }

    String lock(LockName name) {
        return locks() + "/" + name.type() + "-" + name.number();
    }

    String queue(LockName name) {
        return lock(name) + "/queue";
    }

    String holders(LockName name) {
        return lock(name) + "/holders";
    }

    static String holderId(String nodeId, long seq) {
        return nodeId + "." + seq;
    }

    static String holderEntry(String holderId, LockMode mode) {
        return holderId + "=" + mode;
    }

    /** @return the holder id of a holder entry's name */
    static String entryHolder(String entry) {
        return entry.substring(0, entry.lastIndexOf('='));
    }

    /** @return the mode of a holder entry's or demote request's name */
    static LockMode entryMode(String entry) {
        String mode = entry.substring(entry.lastIndexOf('=') + 1);
        int tag = mode.indexOf('@');
        return LockMode.valueOf(tag < 0 ? mode : mode.substring(0, tag));
    }

    /**
     * @param tag the requester's queue entry name: makes every request's name new
     * @return the name of a demote request: {@code <holder>=<target>@<tag>}
     */
    static String demoteRequest(String holderId, LockMode target, String tag) {
        return holderEntry(holderId, target) + "@" + tag;
    }

    /** @return the node id of a holder id */
    static String holderNode(String holderId) {
        return holderId.substring(0, holderId.lastIndexOf('.'));
    }

    /** @return the handle number of a holder id (or of a demote request name, before its '=') */
    static long holderSeq(String holderIdOrRequest) {
        String s = holderIdOrRequest.contains("=") ? entryHolder(holderIdOrRequest) : holderIdOrRequest;
        return Long.parseLong(s.substring(s.lastIndexOf('.') + 1));
    }

    String demoteDir(String nodeId) {
        return root + "/demote/" + nodeId;
    }

    String members() {
        return root + "/members";
    }

    String member(int slot) {
        return members() + "/" + slot;
    }

    String journals() {
        return root + "/journals";
    }

    String journal(int slot) {
        return journals() + "/" + slot;
    }

    String recoveryLock(int slot) {
        return root + "/recovery/" + slot;
    }

    /**
     * @param nodeId a node id to check
     * @return it, if usable in a znode name: letters, digits, '-' and '_' only
     * @throws IllegalArgumentException otherwise
     */
    static String checkNodeId(String nodeId) {
        if (nodeId.isEmpty() || !nodeId.matches("[A-Za-z0-9_-]+")) {
            throw new IllegalArgumentException("node id '" + nodeId + "' must be letters, digits, '-' or '_'");
        }
        return nodeId;
    }
}
