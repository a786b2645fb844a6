package dev.iomap.api;

import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Which cluster a mount joins as one node of several sharing its device (gfs2-like's cluster mode):
 * {@code SCHEME=ADDRESS}, e.g. {@code zk=10.0.0.1:2181,10.0.0.2:2181} for a ZooKeeper ensemble, and
 * optionally this node's id. The scheme selects a {@link dev.iomap.spi.lock.ClusterJoinProvider}
 * (found with {@link java.util.ServiceLoader}; iomap-cluster provides {@code zk}), which reads the
 * address.
 *
 * @param scheme the provider's scheme, letters and digits (e.g. {@code zk})
 * @param address what the provider connects to; non-empty, no white space
 * @param nodeId this mount's id in the cluster (letters, digits, '-', '_'), unique among the nodes;
 *     empty to let the provider make a unique one
 */
public record ClusterSpec(String scheme, String address, Optional<String> nodeId) {

    private static final Pattern SCHEME = Pattern.compile("[A-Za-z][A-Za-z0-9]*");
    private static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9_-]{1,128}");

    /**
     * Validates.
     *
     * @throws IllegalArgumentException if the scheme, address or node id is not one
     */
    public ClusterSpec {
        Objects.requireNonNull(scheme, "scheme");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(nodeId, "nodeId");
        if (!SCHEME.matcher(scheme).matches()) {
            throw new IllegalArgumentException("cluster scheme '" + scheme + "' must be letters and digits, e.g. zk");
        }
        if (address.isEmpty() || address.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("cluster address '" + address + "' must be non-empty, without spaces");
        }
        nodeId.ifPresent(ClusterSpec::checkNodeId);
    }

    /**
     * Parses {@code SCHEME=ADDRESS}, as {@code iomap mount --cluster} takes it.
     *
     * @param text e.g. {@code zk=127.0.0.1:2181}
     * @return the spec, without a node id
     * @throws IllegalArgumentException if it is not {@code SCHEME=ADDRESS}
     */
    public static ClusterSpec parse(String text) {
        int eq = text.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("cluster '" + text + "' is not SCHEME=ADDRESS, e.g. zk=HOST:PORT[,HOST:PORT]");
        }
        return new ClusterSpec(text.substring(0, eq), text.substring(eq + 1), Optional.empty());
    }

    /**
     * @param id this node's id
     * @return this spec with that node id
     * @throws IllegalArgumentException if it is not letters, digits, '-' or '_' (1 to 128 of them)
     */
    public ClusterSpec withNodeId(String id) {
        return new ClusterSpec(scheme, address, Optional.of(id));
    }

    /**
     * @param id a node id
     * @return {@code id}
     * @throws IllegalArgumentException if it is not 1 to 128 letters, digits, '-' or '_'
     */
    public static String checkNodeId(String id) {
        if (!NODE_ID.matcher(id).matches()) {
            throw new IllegalArgumentException("node id '" + id + "' must be 1 to 128 letters, digits, '-' or '_'");
        }
        return id;
    }

    /** @return {@code SCHEME=ADDRESS} as {@link #parse} takes it, then {@code (node ID)} if the spec has a node id */
    @Override
    public String toString() {
        return scheme + "=" + address + nodeId.map(id -> " (node " + id + ")").orElse("");
    }
}
