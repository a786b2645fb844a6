package dev.iomap.adapter.gfs2;

import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A cluster node's iopen glocks (GFS2's {@code i_iopen_gh}): an inode unlinked on one node lives on,
 * blocks and all, until its last close on every node. A node that has an inode open holds the inode's
 * iopen glock in SH. Whoever drops an inode's last link, or closes it last, frees it only if it gets the
 * iopen glock in EX: the request runs every other holder's {@link #callbacks}, which refuse while the
 * inode is open on their node (the holder re-checks at the moment it is asked), so the request fails and
 * the inode stays allocated, marked unlinked in its bitmap (GFS2's {@code GFS2_BLKST_UNLINKED}). A node
 * that refused remembers it: the inode has no name, so at its last close there the core evicts it
 * ({@link #unlinkedElsewhere}, the core's {@code dropInode}) and that node tries to free it in turn. An
 * inode left unlinked by a node that died, or whose holders did not answer in time, is freed by the next
 * {@link #reclaimIfDue} on a node that is due one: at its first inode allocation after it mounted,
 * recovered a dead node's journal or got no answer (GFS2 looks for unlinked inodes when it allocates
 * from a resource group).
 *
 * <p>On a single node nothing of this runs: the core keeps an open unlinked file until its last close.
 * Thread-safe; the core calls {@link #opened} and {@link #closed} under its namespace lock.
 */
final class Iopen {
    /**
     * How long freeing an inode waits for the other nodes to answer whether they have it open. A node
     * answers at once (one round trip); one that does not (paused, or dead and not yet recovered) leaves
     * the inode to a later reclaim.
     */
    static final Duration TRY = Duration.ofSeconds(5);

    /** What became of an unlinked inode that a node tried to free. */
    enum Outcome {
        /** Freed, with its blocks. */
        FREED,
        /** Another node has it open: left unlinked, that node frees it at its last close. */
        IN_USE,
        /** A node holding its iopen glock did not answer in time: left unlinked for a later reclaim. */
        NO_ANSWER,
        /** Nothing to free: it has a name again, or another node freed it already. */
        GONE
    }

    private final Gfs2LikeMount mount;
    private final AtomicBoolean reclaimDue;
    /** The inodes open on this node. Guarded by {@code this}. */
    private final Set<Long> open = new HashSet<>();
    /** Open inodes another node was refused to free (freed at their last close here). Guarded by {@code this}. */
    private final Set<Long> refused = new HashSet<>();
    private final AtomicLong deferred = new AtomicLong();
    private final AtomicLong freed = new AtomicLong();
    private volatile boolean unmounting;

    /**
     * @param mount the mount
     * @param reclaimDue set when unlinked inodes may be waiting to be freed (at mount, after a dead node's
     *     journal was replayed); cleared by {@link #reclaimIfDue}
     */
    Iopen(Gfs2LikeMount mount, AtomicBoolean reclaimDue) {
        this.mount = mount;
        this.reclaimDue = reclaimDue;
    }

    /**
     * @return the callbacks of this node's iopen glocks: nothing to sync; leaving SH or EX for another
     *     node's EX fails while the inode is open here (the requester then leaves the inode allocated)
     */
    DemoteCallbacks callbacks() {
        return new DemoteCallbacks() {
            @Override
            public void sync(LockName name, LockMode from, LockMode to) {
            }

            @Override
            public long invalidate(LockName name, LockMode from, LockMode to) throws IOException {
                refuseIfOpen(name.number());
                return 0;
            }
        };
    }

    /** The re-check a demotion makes: refuses (and remembers it) while the inode is open here. */
    private synchronized void refuseIfOpen(long ino) throws InodeInUseException {
        if (!unmounting && open.contains(ino)) {
            refused.add(ino);
            throw new InodeInUseException("inode " + ino + " is open on this node: it is freed at its last close"
                    + " here, not by the node that asked");
        }
    }

    private synchronized void addOpen(long ino) {
        open.add(ino);
    }

    /** @return whether another node was refused to free the inode while it was open here */
    private synchronized boolean removeOpen(long ino) {
        open.remove(ino);
        return refused.remove(ino);
    }

    private synchronized boolean isOpen(long ino) {
        return open.contains(ino);
    }

    /**
     * @param ino an inode open here
     * @return whether another node was refused its iopen glock while it was open here: that node had
     *     dropped its last link, and an unlinked inode never gets a name again
     */
    synchronized boolean unlinkedElsewhere(long ino) {
        return refused.contains(ino);
    }

    /**
     * The first open of an inode on this node ({@code FileOps.open}): holds its iopen glock
     * in SH, then checks that it still has a name (another node may have unlinked it since the path was
     * resolved, and freed it: its block may not be a dinode any more).
     *
     * @param ino the inode
     * @throws NoSuchFileException if the inode has no name left
     * @throws IOException if a glock cannot be had; the inode is not counted as open then
     */
    void opened(long ino) throws IOException {
        if (!mount.node.clustered()) {
            return;
        }
        addOpen(ino);
        try {
            mount.glocks.holdIopen(ino);
            if (mount.getattr(ino).linkCount() == 0) {
                throw new NoSuchFileException("inode " + ino, null, "it lost its last name on another node while it"
                        + " was being opened");
            }
        } catch (IOException | RuntimeException e) {
            removeOpen(ino);
            throw e;
        }
    }

    /**
     * The last close on this node of an inode the core releases (not evicts): if another node unlinked
     * it and was refused its iopen glock after the core asked {@link #unlinkedElsewhere}, frees it.
     * Called with the core's inode lock held (nothing else of the inode runs on this node).
     *
     * @param ino the inode
     * @throws IOException from a glock or the device
     */
    void closed(long ino) throws IOException {
        if (removeOpen(ino)) {
            freeIfUnused(ino);
        }
    }

    /**
     * The inode has no name and is not open on this node any more (the core's evict): frees it if no
     * other node has it open.
     *
     * @param ino the inode
     * @throws IOException from a glock or the device
     */
    void evicted(long ino) throws IOException {
        removeOpen(ino);
        freeIfUnused(ino);
    }

    /**
     * Frees an unlinked inode under its glock and every resource group's, if it is still unlinked and
     * this node gets its iopen glock in EX within {@link #TRY}.
     *
     * @param ino the inode
     * @return what became of it
     * @throws IOException from a glock or the device
     */
    Outcome freeIfUnused(long ino) throws IOException {
        Outcome outcome = mount.glocked(NodeLocks.Plan.allocating(ino), () -> {
            if (!mount.read(() -> mount.volume.state(ino) == ResourceGroup.UNLINKED
                    && mount.volume.dinode(ino).nlink == 0)) {
                return Outcome.GONE;
            }
            return switch (mount.glocks.tryIopenExclusive(ino, TRY)) {
                case GRANTED -> {
                    mount.reap(ino);
                    yield Outcome.FREED;
                }
                case REFUSED -> Outcome.IN_USE;
                case NO_ANSWER -> Outcome.NO_ANSWER;
            };
        });
        if (outcome == Outcome.FREED) {
            freed.incrementAndGet();
            mount.glocks.dropIopen(ino);
        } else if (outcome != Outcome.GONE) {
            deferred.incrementAndGet();
        }
        if (outcome == Outcome.NO_ANSWER) {
            reclaimDue.set(true);   // the next inode allocation here tries again
        }
        return outcome;
    }

    /**
     * Frees every unlinked inode that no node has open, if a reclaim is due (set at mount, when this
     * node replayed a dead node's journal, and when holders of an inode it tried to free did not answer,
     * so that the next call looks again). Runs before an inode allocation, holding no glock.
     *
     * @throws IOException from a glock or the device
     */
    void reclaimIfDue() throws IOException {
        if (!mount.node.clustered() || !reclaimDue.getAndSet(false)) {
            return;
        }
        List<Long> unlinked = mount.glocked(NodeLocks.Plan.allocating(), () -> mount.read(mount::unlinkedDinodes));
        for (long ino : unlinked) {
            if (!isOpen(ino)) {
                freeIfUnused(ino);
            }
        }
    }

    /**
     * Unmount: the callbacks let every iopen glock go. Files still open here that lost their names stay
     * allocated, unlinked, for a later reclaim (as a single node leaves them to its next mount).
     */
    void unmounting() {
        unmounting = true;
    }

    /**
     * @return {@code iopen.deferred} (unlinked inodes this node left allocated because another node had
     *     them open or did not answer) and {@code iopen.freed} (unlinked inodes it freed after getting
     *     their iopen glock in EX)
     */
    Map<String, Long> counters() {
        return Map.of("iopen.deferred", deferred.get(), "iopen.freed", freed.get());
    }

    /** The answer of a node asked to give up an iopen glock while it has the inode open. */
    static final class InodeInUseException extends IOException {
        private static final long serialVersionUID = 1L;

        InodeInUseException(String message) {
            super(message);
        }
    }
}
