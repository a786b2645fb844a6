package dev.iomap.cluster;

import java.io.IOException;
import java.io.Serial;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every journal slot of the filesystem is claimed by a live mount, so this mount cannot join: the
 * filesystem has as many journals as nodes may mount it at once. Unmount a node, or add journals.
 */
public final class JournalSlotsTakenException extends IOException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** The slots and the node that holds each. */
    private final TreeMap<Integer, String> taken;

    /**
     * @param journals how many journal slots the filesystem has
     * @param taken each slot and the node id that holds it
     */
    public JournalSlotsTakenException(int journals, Map<Integer, String> taken) {
        super("all " + journals + " journal slots are taken " + new TreeMap<>(taken)
                + ": unmount a node first, or give the filesystem more journals");
        this.taken = new TreeMap<>(taken);
    }

    /** @return each taken slot and the node id that holds it */
    public Map<Integer, String> taken() {
        return Map.copyOf(taken);
    }
}
