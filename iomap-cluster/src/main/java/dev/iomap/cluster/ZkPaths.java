package dev.iomap.cluster;

import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.util.Objects;
import java.util.UUID;

/**
 * Where one filesystem's cluster state lives in ZooKeeper, all under {@code /iomap4j/<uuid>} (the
 * filesystem's UUID, so two filesystems never share state):
 * <pre>
 *   incarnations                                   persistent, data N: the last incarnation number given out
 *   nodes/&lt;node&gt;                                    ephemeral, data "N tag": node's live incarnation is &lt;node&gt;.N
 *   locks/&lt;TYPE&gt;-&lt;number&gt;/queue/q-&lt;seq&gt;            ephemeral sequential: requests in arrival order
 *   locks/&lt;TYPE&gt;-&lt;number&gt;/holders/&lt;holder&gt;=&lt;MODE&gt;  persistent: who has the glock in which mode
 *   demote/&lt;incarnation&gt;/&lt;holder&gt;=&lt;MODE&gt;@&lt;q&gt;        ephemeral: "demote holder to MODE", by request q
 *   members/&lt;slot&gt;                                 ephemeral, data incarnation: the mount that owns the slot
 *   journals/&lt;slot&gt;                                persistent, data incarnation: the journal is in use by it
 *   recovery/&lt;slot&gt;                                lock znodes of the journal's recovery lock
 * </pre>
 * An incarnation is {@code <node>.<N>} ({@link Incarnation}); a holder is {@code <incarnation>.<seq>}:
 * the handle's number in that incarnation's lock manager. Holder znodes are persistent on purpose: a
 * dead incarnation's glocks stay held until a survivor recovered its journal. A glock's three znodes
 * ({@code locks/<name>}, its {@code queue} and {@code holders}) are created together and deleted
 * together ({@link ZkLockNodes}), when nobody holds or waits for it.
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

    /** @return the holder id of handle {@code seq} of {@code incarnation}: {@code <node>.<N>.<seq>} */
    static String holderId(Incarnation incarnation, long seq) {
        return incarnation + "." + seq;
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

    /**
     * @return the incarnation of a holder id, or null if it names none (an entry of an older format,
     *     {@code <node>.<seq>}: stale, as no mount of this version wrote it)
     */
    static Incarnation holderIncarnation(String holderId) {
        int dot = holderId.lastIndexOf('.');
        return dot < 0 ? null : Incarnation.parseOrNull(holderId.substring(0, dot));
    }

    /** @return the handle number of a holder id (or of a demote request name, before its '=') */
    static long holderSeq(String holderIdOrRequest) {
        String s = holderIdOrRequest.contains("=") ? entryHolder(holderIdOrRequest) : holderIdOrRequest;
        return Long.parseLong(s.substring(s.lastIndexOf('.') + 1));
    }

    String incarnations() {
        return root + "/incarnations";
    }

    String nodes() {
        return root + "/nodes";
    }

    /** @return the ephemeral znode of node {@code nodeId}'s live incarnation */
    String node(String nodeId) {
        return nodes() + "/" + nodeId;
    }

    String demotes() {
        return root + "/demote";
    }

    /** @return the directory of the demote requests to {@code incarnation}'s holders */
    String demoteDir(Incarnation incarnation) {
        return demotes() + "/" + incarnation;
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
