package dev.iomap.adapter.gfs2;

import dev.iomap.api.FileType;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.lock.ClusterContext;
import dev.iomap.spi.lock.LockMode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * How a gfs2-like mount that is a node of a cluster brackets its operations with glocks: the inodes
 * an operation reads (SH) or changes (EX), the rename glock for renames, and the resource groups it
 * allocates from or frees into (EX): all of them for changes that may free blocks anywhere (unlink,
 * rename, truncate, fallocate, freeing a file); for a write, a create or a link only the node's
 * preferred group, as GFS2 gives each node its own (starting at an offset chosen by the journal slot,
 * trying the next group, one glock at a time, when that one has no room, and every group only when none
 * has). After a resource group's glock is taken its copy is read
 * again if a demotion made it stale; an inode's cached dinode and tree were dropped by its demotion,
 * so the next read comes from the device. On a single node (no cluster) every method just runs the
 * operation (the inode glocks of reads and writes are taken by {@link Gfs2IomapOps} either way).
 *
 * <p>A thread never locks a name it already holds: the inodes each thread holds are remembered, and a
 * nested operation skips them. Thread-safe.
 */
final class NodeLocks {
    /** Which resource groups an operation holds. */
    enum Rgrps {
        /** none: it neither allocates nor frees */
        NONE,
        /** one group with room for the plan's blocks, the node's preferred one first ({@link #lockPreferredRgrp}) */
        PREFERRED,
        /** every group: it may free blocks anywhere, or allocate more than one group holds */
        ALL
    }

    /**
     * The glocks an operation needs; inode numbers below 0 are ignored (a name that does not exist).
     *
     * @param blocks with {@link Rgrps#PREFERRED}: the most blocks the operation allocates (a group is taken
     *     only if it has that many available), else 0
     */
    record Plan(long[] shared, long[] exclusive, boolean rename, Rgrps rgrps, long blocks) {
        /** @return a plan reading {@code inos} */
        static Plan shared(long... inos) {
            return new Plan(inos, new long[0], false, Rgrps.NONE, 0);
        }

        /** @return a plan changing {@code inos}, without resource groups */
        static Plan exclusive(long... inos) {
            return new Plan(new long[0], inos, false, Rgrps.NONE, 0);
        }

        /** @return a plan changing {@code inos} and allocating or freeing in any resource group */
        static Plan allocating(long... inos) {
            return new Plan(new long[0], inos, false, Rgrps.ALL, 0);
        }

        /**
         * @param blocks the most blocks the operation allocates; it frees none
         * @return a plan changing {@code inos} and allocating in one group with room ({@link Rgrps#PREFERRED})
         */
        static Plan allocatingOnly(long blocks, long... inos) {
            return new Plan(new long[0], inos, false, Rgrps.PREFERRED, blocks);
        }

        /** @return this plan with the rename glock first */
        Plan withRename() {
            return new Plan(shared, exclusive, true, rgrps, blocks);
        }
    }

    private final Gfs2LikeMount mount;
    private final ClusterContext cluster;
    private final int home;
    /** Where the next preferred-group search starts: the home group, or the last group that had room. */
    private volatile int preferred;
    /** Inodes whose cache a demotion dropped: their in-memory size is refreshed at the next use. */
    private final Set<Long> sizeStale = java.util.concurrent.ConcurrentHashMap.newKeySet();
    // Per mount and per thread: a thread running another node's demotion holds that node's locks, not these.
    @SuppressWarnings("ThreadLocalUsage")
    private final ThreadLocal<Set<Long>> heldInodes = ThreadLocal.withInitial(HashSet::new);

    /**
     * @param mount the mount
     * @param cluster its cluster, or null on a single node
     */
    NodeLocks(Gfs2LikeMount mount, ClusterContext cluster) {
        this.mount = mount;
        this.cluster = cluster;
        Gfs2Layout layout = mount.volume.layout;
        this.home = cluster == null ? 0 : (int) ((long) cluster.journal() * layout.rgCount() / layout.journals());
        this.preferred = home;
    }

    /** @return whether the mount is a node of a cluster */
    boolean clustered() {
        return cluster != null;
    }

    /** @return the resource group this node's first allocation starts at (its journal slot's) */
    int home() {
        return home;
    }

    /**
     * Runs {@code op} holding the plan's glocks (cluster nodes; on a single node it just runs it).
     *
     * @param plan the glocks
     * @param op the operation
     * @return what {@code op} returns
     * @throws IOException from a glock or from {@code op}
     */
    <T> T glocked(Plan plan, Namespace.Change<T> op) throws IOException {
        if (cluster == null) {
            return op.run();
        }
        TreeMap<Long, LockMode> modes = new TreeMap<>();
        for (long ino : plan.shared()) {
            if (ino >= 0) {
                modes.put(ino, LockMode.SH);
            }
        }
        for (long ino : plan.exclusive()) {
            if (ino >= 0) {
                modes.put(ino, LockMode.EX);
            }
        }
        Set<Long> held = heldInodes.get();
        modes.keySet().removeAll(held);
        List<Long> locked = new ArrayList<>();
        boolean rename = false;
        boolean rgrps = false;
        try {
            if (plan.rename()) {
                mount.glocks.lockRename();
                rename = true;
            }
            for (Map.Entry<Long, LockMode> e : modes.entrySet()) {
                mount.glocks.lock(e.getKey(), e.getValue());
                locked.add(e.getKey());
                held.add(e.getKey());
            }
            if (plan.rgrps() != Rgrps.NONE && mount.glocks.rgrpsHeld() == 0) {
                if (plan.rgrps() == Rgrps.ALL) {
                    lockAllRgrps();
                } else {
                    lockPreferredRgrp(plan.blocks());
                }
                rgrps = true;
            }
            return op.run();
        } finally {
            if (rgrps) {
                mount.glocks.unlockRgrps();
            }
            for (int i = locked.size() - 1; i >= 0; i--) {
                held.remove(locked.get(i));
                mount.glocks.unlock(locked.get(i));
            }
            if (rename) {
                mount.glocks.unlockRename();
            }
        }
    }

    /**
     * Takes every resource group's glock in EX for the calling thread and reads stale copies again. Does
     * nothing on a single node.
     *
     * @throws IOException if a glock cannot be had or a group cannot be read; nothing is held then
     */
    void lockAllRgrps() throws IOException {
        if (cluster == null) {
            return;
        }
        BitSet groups = new BitSet();
        groups.set(0, mount.volume.rgs.length);
        lockAndRefresh(groups);
    }

    /**
     * Takes the glock of one resource group with at least {@code blocks} available blocks for the calling
     * thread, as GFS2's allocator picks a group ({@code gfs2_inplace_reserve}): this node's preferred group
     * first (its home group, chosen by its journal slot so that nodes start apart, or the group that last
     * had room), then the next ones in turn, holding one glock at a time (a full group's is given back
     * before the next is taken, so the order of glocks never matters), and every group when none has room
     * alone (the allocation may then span groups, or fail with ENOSPC). Nodes that allocate in their own
     * groups never ask each other for a resource group. Does nothing on a single node.
     *
     * @param blocks the most blocks the operation allocates, at least 1
     * @throws IOException if a glock cannot be had or a group cannot be read; nothing is held then
     */
    void lockPreferredRgrp(long blocks) throws IOException {
        if (cluster == null) {
            return;
        }
        int count = mount.volume.rgs.length;
        int first = preferred;
        for (int k = 0; k < count; k++) {
            int g = (first + k) % count;
            BitSet group = new BitSet();
            group.set(g);
            mount.glocks.lockRgrps(group);
            boolean room;
            try {
                room = mount.read(() -> {
                    mount.volume.refreshRgrps();
                    return mount.volume.hasRoom(g, blocks);
                });
            } catch (IOException | RuntimeException e) {
                mount.glocks.unlockRgrps();
                throw e;
            }
            if (room) {
                preferred = g;
                return;
            }
            mount.glocks.unlockRgrps();
        }
        lockAllRgrps();
    }

    /**
     * Takes resource group {@code g}'s glock in EX for the calling thread (FITRIM's hold: no node allocates
     * there until {@link #unlockRgrps}) and reads its copy again if a demotion made it stale. Does nothing
     * on a single node.
     *
     * @param g the group
     * @throws IOException if the glock cannot be had or the group cannot be read; nothing is held then
     */
    void lockRgrp(int g) throws IOException {
        if (cluster == null) {
            return;
        }
        BitSet group = new BitSet();
        group.set(g);
        lockAndRefresh(group);
    }

    /** Takes {@code groups}' glocks in EX and reads stale copies again; on failure nothing is held. */
    private void lockAndRefresh(BitSet groups) throws IOException {
        mount.glocks.lockRgrps(groups);
        try {
            mount.read(() -> {
                mount.volume.refreshRgrps();
                return null;
            });
        } catch (IOException | RuntimeException e) {
            mount.glocks.unlockRgrps();
            throw e;
        }
    }

    /** Ends the resource-group glocks this thread holds; does nothing on a single node. */
    void unlockRgrps() {
        if (cluster != null) {
            mount.glocks.unlockRgrps();
        }
    }

    /** @return whether the calling thread holds every resource group */
    boolean holdsAllRgrps() {
        return mount.glocks.rgrpsHeld() == mount.volume.rgs.length;
    }

    /**
     * Makes what this node committed readable by the next holder of a glock: commits the running
     * transaction, and on a cluster node writes the journal's committed blocks home (a checkpoint), since
     * other nodes read the device, not this node's journal.
     *
     * @throws IOException if the commit or the checkpoint fails
     */
    void flushLog() throws IOException {
        mount.tx.commit();
        if (cluster != null) {
            mount.read(() -> {
                mount.volume.journal.checkpoint();
                return null;
            });
        }
    }

    /**
     * Fails once the node is fenced.
     *
     * @throws IOException the fence's error
     */
    void checkFence() throws IOException {
        if (cluster != null) {
            cluster.checkWrite();
        }
    }

    /**
     * Holds the file's glock for one core operation ({@link dev.iomap.spi.FileOps#use}): SH
     * for a read, EX for a change, registered as this thread's so that the operation's own glock uses
     * ({@link #lockInode}) take nothing more; if a demotion dropped the inode's cache since the last use
     * ({@link #invalidated}), sets the in-memory size from the dinode read again from the device. On a
     * single node, or when the thread already holds the inode, holds nothing.
     *
     * @param inode the file
     * @param write whether the operation changes the file
     * @return the use
     * @throws IOException if the glock cannot be had or the dinode read
     */
    dev.iomap.spi.FileOps.FileUse use(IomapInode inode, boolean write) throws IOException {
        long ino = inode.ino();
        Set<Long> held = heldInodes.get();
        if (cluster == null || held.contains(ino)) {
            return dev.iomap.spi.FileOps.FileUse.NONE;
        }
        mount.glocks.lock(ino, write ? LockMode.EX : LockMode.SH);
        held.add(ino);
        try {
            if (sizeStale.remove(ino)) {
                mount.read(() -> {
                    Dinode d = mount.volume.dinode(ino);
                    if (d.type == FileType.REGULAR) {
                        inode.refreshSize(d.size);
                    }
                    return null;
                });
            }
        } catch (IOException | RuntimeException e) {
            sizeStale.add(ino);
            held.remove(ino);
            mount.glocks.unlock(ino);
            throw e;
        }
        return () -> {
            held.remove(ino);
            mount.glocks.unlock(ino);
        };
    }

    /**
     * Takes one use of an inode's glock for a mapping or a size change, unless the calling thread holds
     * it already for the whole operation ({@link #use}, {@link #glocked}), whose mode covers what the
     * operation's steps need.
     *
     * @param ino the inode
     * @param mode the mode needed
     * @return whether a use was taken (then end it with {@link Glocks#unlock})
     * @throws IOException if the glock cannot be had
     */
    boolean lockInode(long ino, LockMode mode) throws IOException {
        return lockInode(ino, mode, false);
    }

    /**
     * As {@link #lockInode(long, LockMode)}; with {@code atOnce}, only if this node holds the glock
     * in a covering mode with no demotion pending ({@link Glocks#lockAtOnce}): a mapping asked for
     * with {@code IomapRequest.NOWAIT} (the core's readahead, which holds its folios locked while it
     * maps them, and must neither wait for a demotion that waits for those folios nor run another
     * node's demotion callbacks).
     *
     * @throws dev.iomap.spi.lock.LockTimeoutException with {@code atOnce}, if the use would wait
     */
    boolean lockInode(long ino, LockMode mode, boolean atOnce) throws IOException {
        if (heldInodes.get().contains(ino)) {
            return false;
        }
        if (atOnce) {
            mount.glocks.lockAtOnce(ino, mode);
        } else {
            mount.glocks.lock(ino, mode);
        }
        return true;
    }

    /** @return whether the calling thread holds the inode for a whole operation */
    boolean holdsInode(long ino) {
        return heldInodes.get().contains(ino);
    }

    /**
     * An inode glock's invalidation dropped what this node cached of the inode: its in-memory size is
     * refreshed at the next {@link #use}.
     *
     * @param ino the inode
     */
    void invalidated(long ino) {
        if (cluster != null) {
            sizeStale.add(ino);
        }
    }

    /** The inode was freed: nothing to refresh any more. */
    void forget(long ino) {
        sizeStale.remove(ino);
    }

    /** @return the cluster's counters of this node ({@link ClusterContext#counters}); none on a single node */
    Map<String, Long> clusterCounters() {
        return cluster == null ? Map.of() : cluster.counters();
    }

        /** Leaves the cluster (after unmount released the glocks); does nothing on a single node. */
    void leave() throws IOException {
        if (cluster != null) {
            cluster.close();
        }
    }
}
