package dev.iomap.cluster;

import java.util.Objects;

/**
 * One mount of a node: the node's id and a number the cluster gave this mount when it joined, new at
 * every join ({@link ClusterMembership#join} bumps a counter in ZooKeeper). A node that crashes and
 * mounts again keeps its id but is another incarnation: every glock holder entry, journal marker and
 * recovery names an incarnation, so the new one recovers what the dead one left and nobody mistakes
 * one for the other. Written {@code <node>.<number>}, e.g. {@code A.3} (a node id has no '.').
 *
 * @param nodeId the node's id (letters, digits, '-', '_')
 * @param number the join's number, at least 1, unique among the joins of one filesystem
 */
public record Incarnation(String nodeId, long number) {

    /**
     * @throws IllegalArgumentException if the node id has other characters than letters, digits, '-'
     *     and '_', or the number is below 1
     */
    public Incarnation {
        ZkPaths.checkNodeId(Objects.requireNonNull(nodeId, "nodeId"));
        if (number < 1) {
            throw new IllegalArgumentException("incarnation number " + number + " of node " + nodeId
                    + " is below 1");
        }
    }

    /**
     * @param text an incarnation as {@link #toString} writes it
     * @return it, or null if {@code text} is not one (a znode left by an older version)
     */
    static Incarnation parseOrNull(String text) {
        int dot = text.indexOf('.');
        if (dot <= 0 || dot == text.length() - 1) {
            return null;
        }
        try {
            return new Incarnation(text.substring(0, dot), Long.parseLong(text.substring(dot + 1)));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** @return {@code <node>.<number>} */
    @Override
    public String toString() {
        return nodeId + "." + number;
    }
}
