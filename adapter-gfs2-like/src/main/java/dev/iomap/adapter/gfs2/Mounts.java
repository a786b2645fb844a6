package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.Journal;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.lock.ClusterContext;
import dev.iomap.spi.lock.LockManager;
import java.io.IOException;

/**
 * How a gfs2-like mount starts: as a single node (its journal replayed, the image checked, unlinked dinodes
 * reclaimed) or as a node of a cluster (its slot's journal replayed, nothing else assumed about an image
 * other nodes may be changing), and a dead node's journal replayed by a survivor.
 */
final class Mounts {
    private Mounts() {
    }

    /**
     * Mounts a device.
     *
     * @param device the device, in filesystem blocks
     * @param dataJournal whether every regular file's data is journaled ({@code data=journal})
     * @param journalIndex this node's journal
     * @param locks this node's lock manager (closed at unmount)
     * @return the mount
     * @throws CorruptFileSystemException if the image is damaged: anything fsck's checks
     *     flag on the replayed image refuses the mount ({@link Gfs2Fsck#verifyForMount})
     * @throws IOException if the device fails
     */
    static Gfs2LikeMount mount(BlockDevice device, boolean dataJournal, int journalIndex, LockManager locks)
            throws IOException {
        return mount(device, Gfs2Layout.read(device), dataJournal, journalIndex, locks, null,
                new java.util.concurrent.atomic.AtomicBoolean());
    }

    /**
     * Mounts a device as a node of a cluster: this node's journal and lock manager come from
     * {@code cluster}. Other nodes may have the filesystem mounted, so the image is not checked, and
     * unlinked dinodes are freed only once no node has them open ({@link Iopen}); every resource group
     * and dinode is read under its glock.
     *
     * @param device the shared device, in filesystem blocks
     * @param layout its superblock
     * @param dataJournal whether every regular file's data is journaled
     * @param cluster the cluster this node joined (left at unmount, or here if the mount fails)
     * @param reclaimDue set when unlinked inodes may wait to be freed (after this node replayed a dead
     *     node's journal); set here too: the node's first inode allocation looks for them ({@link Iopen})
     * @return the mount
     * @throws IOException if this node's journal cannot be replayed or the device fails
     */
    static Gfs2LikeMount mountNode(BlockDevice device, Gfs2Layout layout, boolean dataJournal, ClusterContext cluster,
            java.util.concurrent.atomic.AtomicBoolean reclaimDue) throws IOException {
        reclaimDue.set(true);
        try {
            return mount(device, layout, dataJournal, cluster.journal(), cluster.lockManager(), cluster, reclaimDue);
        } catch (IOException | RuntimeException e) {
            try {
                cluster.lockManager().close();
                cluster.close();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Replays journal {@code slot} onto the device (a dead node's recovery); harmless when it is empty.
     *
     * @param device the shared device
     * @param layout its superblock
     * @param slot the journal
     * @return the transactions it replayed
     * @throws IOException if the journal is damaged or the device fails
     */
    static long replayJournal(BlockDevice device, Gfs2Layout layout, int slot) throws IOException {
        if (slot < 0 || slot >= layout.journals()) {
            throw new InvalidRangeException("journal " + slot + " does not exist: the filesystem has "
                    + layout.journals() + " journals");
        }
        return Journal.open(device, layout.journalStart(slot), layout.journalBlocks()).replay().transactions();
    }

    private static Gfs2LikeMount mount(BlockDevice device, Gfs2Layout layout, boolean dataJournal, int journalIndex,
            LockManager locks, ClusterContext cluster, java.util.concurrent.atomic.AtomicBoolean reclaimDue)
            throws IOException {
        if (journalIndex < 0 || journalIndex >= layout.journals()) {
            throw new InvalidRangeException("journal " + journalIndex + " does not exist: the filesystem has "
                    + layout.journals() + " journals");
        }
        Journal journal = Journal.open(device, layout.journalStart(journalIndex), layout.journalBlocks());
        journal.replay();
        ResourceGroup[] rgs = Gfs2Volume.loadRgrps(journal, layout);
        Gfs2Volume volume = new Gfs2Volume(device, layout, journal, rgs);
        if (cluster == null) {
            Gfs2Fsck.verifyForMount(volume);
        }
        Gfs2LikeMount mount = new Gfs2LikeMount(volume, dataJournal, locks, cluster, reclaimDue);
        mount.node.glocked(NodeLocks.Plan.shared(layout.rootIno()),
                () -> mount.read(() -> mount.dinodeOf(layout.rootIno(), FileType.DIRECTORY)));
        if (cluster == null) {
            mount.reclaimUnlinked();
        }
        return mount;
    }

}
