package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.lock.InodeGlockCallbacks;
import dev.iomap.spi.FileOps;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.SuperOps;
import dev.iomap.spi.XattrOps;
import dev.iomap.spi.lock.ClusterContext;
import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockManager;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileType;
import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.FsStat;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One mounted gfs2-like filesystem: file data, sizes and the mount's life; names, links and
 * attributes are in {@link Namespace}, which this class extends.
 *
 * <p>Mount reads the superblock, replays this node's journal (journal 0 unless the mount option
 * {@code journal=K} says otherwise), loads the resource groups, runs fsck's checks on the replayed
 * image ({@link Gfs2Fsck#verifyForMount}: a damaged one is refused) and frees the dinodes a crash left
 * unlinked. Unmount commits and checkpoints. Thread-safe: see {@link Gfs2Transactions} for the locks.
 */
final class Gfs2LikeMount extends Namespace implements MountedFileSystem, SuperOps, FileOps {
    /** Known mount options: {@code data=ordered|journal}, {@code journal=K}. */
    static final Set<String> OPTIONS = Set.of("data", "journal");

    final FileTree tree;
    final boolean dataJournal;
    final Glocks glocks;
    final NodeLocks node;
    final Iopen iopen;
    private final Gfs2IomapOps ops;
    private final Map<Long, IomapInode> inodes = new ConcurrentHashMap<>();
    /** Bytes {@link #trim} discarded since mount. */
    private final java.util.concurrent.atomic.AtomicLong trimmedBytes = new java.util.concurrent.atomic.AtomicLong();
    private volatile boolean closed;

    /**
     * @param reclaimDue set when unlinked inodes may wait for a cluster node to free them ({@link Iopen})
     */
    Gfs2LikeMount(Gfs2Volume volume, boolean dataJournal, LockManager locks, ClusterContext cluster,
            java.util.concurrent.atomic.AtomicBoolean reclaimDue) {
        super(volume, new Gfs2Transactions(volume));
        this.tree = new FileTree(volume);
        this.dataJournal = dataJournal;
        this.node = new NodeLocks(this, cluster);
        this.iopen = new Iopen(this, reclaimDue);
        this.glocks = new Glocks(locks, new InodeGlockCallbacks(this::cached, ino -> node.flushLog(),
                ino -> read(() -> {
                    volume.forget(ino);
                    node.invalidated(ino);
                    return null;
                })), new DemoteCallbacks() {
                    @Override
                    public void sync(LockName name, LockMode from, LockMode to) throws IOException {
                        node.flushLog();
                    }

                    @Override
                    public long invalidate(LockName name, LockMode from, LockMode to) throws IOException {
                        read(() -> {
                            volume.invalidateRgrp((int) name.number());
                            return null;
                        });
                        return 0;
                    }
                }, iopen.callbacks());
        if (cluster != null) {
            volume.cluster(glocks::holdsRgrp);
        }
        this.ops = new Gfs2IomapOps(this);
    }

    /** Frees the dinodes left unlinked by a crash (GFS2 reclaims them when it finds them). Single node. */
    void reclaimUnlinked() throws IOException {
        for (long ino : read(this::unlinkedDinodes)) {
            freeUnlinkedData(ino);
            tx.makeRoom();
            tx.meta.lock();
            try {
                destroy(volume.dinode(ino));
            } finally {
                tx.meta.unlock();
            }
        }
        tx.commit();
    }

    /**
     * @return the dinodes marked unlinked in the resource groups' bitmaps. Caller holds {@code meta} (and,
     *     on a cluster node, every resource group's glock)
     */
    java.util.List<Long> unlinkedDinodes() {
        java.util.List<Long> unlinked = new java.util.ArrayList<>();
        for (ResourceGroup rg : volume.rgs) {
            for (long b = rg.dataStart(); b < rg.start + rg.length; b++) {
                if (rg.state(b) == ResourceGroup.UNLINKED) {
                    unlinked.add(b);
                }
            }
        }
        return unlinked;
    }

    /** Fails if the mount was unmounted. */
    @Override
    void checkLive() throws IOException {
        if (closed) {
            throw new FileSystemShutdownException("gfs2-like mount was unmounted");
        }
        node.checkFence();
        tx.checkHealthy();
    }

    @Override
    <T> T glocked(NodeLocks.Plan plan, Change<T> op) throws IOException {
        return node.glocked(plan, op);
    }

    @Override
    void beforeNewInode() throws IOException {
        iopen.reclaimIfDue();
    }

    /** A cluster node takes the new inode's glock and iopen glock ({@link Glocks#claimNew}). */
    @Override
    void claim(long ino) throws IOException {
        if (node.clustered()) {
            glocks.claimNew(ino);
        }
    }

    /** @return whether {@code d}'s data goes through the journal (its flag, or {@code data=journal}) */
    boolean jdata(Dinode d) {
        return d.type == FileType.REGULAR && (dataJournal || d.jdata());
    }

    /** Keeps the core's inode for demotions and ordered writes. */
    void remember(IomapInode inode) {
        inodes.putIfAbsent(inode.ino(), inode);
    }

    /** @return the core's inode of {@code ino} if this mount has seen it, else null */
    IomapInode cached(long ino) {
        return inodes.get(ino);
    }

    /**
     * Unstuffs a file: allocates one block, moves the stuffed bytes below {@code size} there (written
     * to the device now, before the commit that points at it), height 1 ({@code gfs2_unstuff_dinode}).
     * Caller holds {@code meta}.
     */
    void unstuff(Dinode d, long size) throws IOException {
        int length = (int) Math.min(Math.max(size, d.size), d.inline.length);
        d.height = 1;
        java.util.Arrays.fill(d.pointers, 0);
        if (length > 0) {
            long b = volume.allocate(d.ino, d.ino, 1, ResourceGroup.USED)[0];
            volume.writeData(b, java.util.Arrays.copyOf(d.inline, length));
            d.pointers[0] = b;
            d.blocks++;
        }
        java.util.Arrays.fill(d.inline, (byte) 0);
        volume.dirtyDinode(d);
    }

    @Override
    public FileUse use(IomapInode inode, boolean write) throws IOException {
        remember(inode);
        return node.use(inode, write);
    }

    @Override
    public int blockSize() {
        return volume.blockSize;
    }

    @Override
    public long rootIno() {
        return volume.layout.rootIno();
    }

    @Override
    public SuperOps superOps() {
        return this;
    }

    @Override
    public InodeOps inodeOps() {
        return this;
    }

    @Override
    public FileOps fileOps() {
        return this;
    }

    @Override
    public XattrOps xattrOps() {
        return this;
    }

    @Override
    public long maxFileSize() {
        return Math.min(volume.layout.heightBlocks(8), 1L << 40) * blockSize();
    }

    @Override
    public IomapOps iomapOps() {
        return ops;
    }

    @Override
    public WritebackOps writebackOps() {
        return ops;
    }

    @Override
    public FsStat statfs() throws IOException {
        checkLive();
        return node.glocked(NodeLocks.Plan.allocating(), () -> read(() -> {
            long dinodes = 0;
            for (ResourceGroup rg : volume.rgs) {
                dinodes += rg.dinodes();
            }
            long free = volume.freeBlocks();
            // Available (f_bavail, df's): what the data of one new file can have, its dinode block and the
            // indirect blocks that map its data coming out of the free space too.
            return new FsStat(blockSize(), volume.layout.totalBlocks(), free, dinodes + free, free,
                    volume.layout.dataBlocksWithin(Math.max(0, free - 1)));
        }));
    }

    @Override
    public void setSize(IomapInode inode, long newSize) throws IOException {
        checkLive();
        remember(inode);
        InvalidRangeException.checkRange("gfs2-like setSize of inode " + inode.ino(), newSize, 0, maxFileSize());
        boolean locked = node.lockInode(inode.ino(), LockMode.EX);
        try {
            node.glocked(NodeLocks.Plan.allocating(), () -> {
                resize(inode, newSize);
                return null;
            });
        } finally {
            if (locked) {
                glocks.unlock(inode.ino());
            }
        }
    }

    /**
     * Sets the size in steps of {@link Gfs2Transactions#stepBlocks} blocks freed each, from the end down:
     * after each step the dinode's size covers exactly what is left of the old data below it (no block
     * past the size but those the final size keeps), so a power cut between steps leaves a consistent,
     * shorter file.
     */
    private void resize(IomapInode inode, long newSize) throws IOException {
        int bs = blockSize();
        long keep = Math.ceilDiv(newSize, (long) bs);
        boolean first = true;
        boolean more = true;
        while (more) {
            long want = tx.stepReservation();
            tx.makeRoom(want);
            tx.meta.lock();
            try {
                Dinode d = volume.dinode(inode.ino());
                if (first && d.stuffed()) {
                    int capacity = volume.layout.stuffedCapacity();
                    if (newSize > capacity) {
                        unstuff(d, Math.min(d.size, newSize));
                    } else if (newSize < d.size) {
                        java.util.Arrays.fill(d.inline, (int) newSize, d.inline.length, (byte) 0);
                    }
                }
                first = false;
                more = false;
                long size = newSize;
                if (!d.stuffed()) {
                    long at = tree.punchStep(d, keep, Long.MAX_VALUE, tx.stepBlocks());
                    more = at > keep;
                    if (more) {
                        size = Math.max(newSize, Math.min(d.size, at * bs));
                    } else if (newSize == 0 && d.blocks == 0) {
                        d.height = 0;
                        java.util.Arrays.fill(d.inline, (byte) 0);
                    }
                }
                d.size = size;
                d.mtime = d.ctime = Instant.now();
                volume.dirtyDinode(d);
            } finally {
                tx.meta.unlock();
                tx.release(want);
            }
        }
    }

    /** Punches {@code [first, end)} of a file in steps of {@link Gfs2Transactions#stepBlocks} blocks freed each. */
    private void punchSteps(long ino, long first, long end) throws IOException {
        boolean more = true;
        while (more) {
            long want = tx.stepReservation();
            tx.makeRoom(want);
            tx.meta.lock();
            try {
                Dinode d = volume.dinode(ino);
                more = !d.stuffed() && tree.punchStep(d, first, end, tx.stepBlocks()) > first;
            } finally {
                tx.meta.unlock();
                tx.release(want);
            }
        }
    }

    @Override
    public void fallocate(IomapInode inode, FallocateMode mode, long offset, long length) throws IOException {
        checkLive();
        remember(inode);
        InvalidRangeException.checkRange("gfs2-like fallocate of inode " + inode.ino(), offset, length, maxFileSize());
        int bs = blockSize();
        long first = offset / bs;
        long end = Math.ceilDiv(offset + length, (long) bs);
        boolean locked = node.lockInode(inode.ino(), LockMode.EX);
        try {
            node.glocked(NodeLocks.Plan.allocating(), () -> {
                allocateRange(inode, mode, offset, length, first, end);
                return null;
            });
        } finally {
            if (locked) {
                glocks.unlock(inode.ino());
            }
        }
    }

    /**
     * Unstuffs if needed, then punches and allocates in steps of {@link Gfs2Transactions#stepBlocks}
     * blocks, each its own reservation (GFS2's fallocate allocates in chunks, each a transaction): a
     * power cut between steps leaves part of the range allocated and zeroed, all consistent.
     */
    private void allocateRange(IomapInode inode, FallocateMode mode, long offset, long length, long first, long end)
            throws IOException {
        boolean stuffed;
        tx.makeRoom();
        tx.meta.lock();
        try {
            Dinode d = volume.dinode(inode.ino());
            if (d.stuffed() && (mode != FallocateMode.ALLOCATE || offset + length > volume.layout.stuffedCapacity())) {
                unstuff(d, inode.size());
            }
            stuffed = d.stuffed();
            d.mtime = d.ctime = Instant.now();
            volume.dirtyDinode(d);
        } finally {
            tx.meta.unlock();
        }
        if (stuffed) {
            return;
        }
        if (mode != FallocateMode.ALLOCATE) {
            punchSteps(inode.ino(), first, end);
        }
        if (mode != FallocateMode.PUNCH_HOLE) {
            long b = first;
            while (b < end) {
                long want = tx.stepReservation();
                tx.makeRoom(want);
                tx.meta.lock();
                try {
                    b = allocateZeroed(volume.dinode(inode.ino()), b, end, tx.stepBlocks());
                } finally {
                    tx.meta.unlock();
                    tx.release(want);
                }
            }
        }
    }

    /**
     * Allocates holes of {@code [first, end)} from {@code first} on, at most {@code budget} blocks, and
     * writes zeroes to the new blocks (no unwritten state).
     *
     * @return the file block where the next step starts ({@code end} when done)
     */
    private long allocateZeroed(Dinode d, long first, long end, long budget) throws IOException {
        long b = first;
        long left = budget;
        while (b < end && left > 0) {
            FileTree.Run run = tree.lookup(d, b, end - b);
            if (run.hole()) {
                run = tree.allocate(d, b, Math.min(left, Math.min(run.count(), end - b)));
                volume.zeroData(run.address(), run.count());
                left -= run.count();
            }
            b += run.count();
        }
        return b;
    }

    @Override
    public void updateTimes(IomapInode inode, Instant now) throws IOException {
        checkLive();
        node.glocked(NodeLocks.Plan.exclusive(inode.ino()), () -> read(() -> {
            Dinode d = volume.dinode(inode.ino());
            d.mtime = now;
            d.ctime = now;
            volume.dirtyDinode(d);
            return null;
        }));
    }

    @Override
    public void fsync(IomapInode inode, boolean dataOnly) throws IOException {
        checkLive();
        syncSize(inode);
        tx.commit();
    }

    /**
     * Records the in-memory size of a written file in its dinode (GFS2 does at write end). A cluster
     * node does so only while it holds the inode in EX: the size grows only under EX, and the demotion
     * that ended an EX committed the size of its writes.
     */
    void syncSize(IomapInode inode) throws IOException {
        if (node.clustered() && glocks.mode(inode.ino()) != LockMode.EX) {
            return;
        }
        node.glocked(NodeLocks.Plan.exclusive(inode.ino()), () -> read(() -> {
            Dinode d = volume.dinode(inode.ino());
            if (d.type == FileType.REGULAR && inode.size() > d.size && !d.stuffed()) {
                d.size = inode.size();
                volume.dirtyDinode(d);
            }
            return null;
        }));
    }

    @Override
    public void sync() throws IOException {
        checkLive();
        for (IomapInode inode : inodes.values()) {
            syncSize(inode);
        }
        tx.commit();
    }

    /** A cluster node holds the inode's iopen glock while the inode is open here ({@link Iopen#opened}). */
    @Override
    public void open(IomapInode inode) throws IOException {
        remember(inode);
        iopen.opened(inode.ino());
    }

    /** @return whether another node unlinked the inode while it was open here ({@link Iopen#unlinkedElsewhere}) */
    @Override
    public boolean dropInode(IomapInode inode) {
        return iopen.unlinkedElsewhere(inode.ino());
    }

    /** A cluster node frees the inode if another node unlinked it meanwhile ({@link Iopen#closed}). */
    @Override
    public void release(IomapInode inode) throws IOException {
        iopen.closed(inode.ino());
    }

    /**
     * Frees the inode and its blocks; a cluster node only if no other node has it open (else the last
     * of them does, {@link Iopen}), and forgets its glocks either way.
     */
    @Override
    public void evict(long ino) throws IOException {
        checkLive();
        inodes.remove(ino);
        if (node.clustered()) {
            iopen.evicted(ino);
            glocks.drop(ino);
            glocks.dropIopen(ino);
            node.forget(ino);
        } else {
            glocks.drop(ino);
            reap(ino);
        }
    }

    /**
     * Frees an unlinked inode and its blocks, or gives back the reservation of a linked one. On a cluster
     * node the caller holds the inode's glock, every resource group's and the inode's iopen glock in EX.
     */
    void reap(long ino) throws IOException {
        freeUnlinkedData(ino);
        tx.makeRoom();
        tx.meta.lock();
        try {
            Dinode d = volume.dinode(ino);
            if (d.nlink == 0) {
                destroy(d);
            } else {
                volume.dropReservation(ino);
            }
        } finally {
            tx.meta.unlock();
        }
    }

    /**
     * Frees the data of an unlinked regular file in steps (its dinode stays, marked unlinked, until
     * {@link #destroy} frees what is left in one small transaction), so freeing a file larger than the
     * journal never builds one transaction for it all. Does nothing for a linked file.
     */
    private void freeUnlinkedData(long ino) throws IOException {
        boolean unlinkedFile;
        tx.meta.lock();
        try {
            Dinode d = volume.dinode(ino);
            unlinkedFile = d.nlink == 0 && d.type == FileType.REGULAR;
        } finally {
            tx.meta.unlock();
        }
        if (unlinkedFile) {
            punchSteps(ino, 0, Long.MAX_VALUE);
        }
    }

    /** Frees a dinode, its tree and its chains. Caller holds {@code meta}. */
    @Override
    void destroy(Dinode d) throws IOException {
        if (d.type == FileType.REGULAR) {
            tree.punch(d, 0, Long.MAX_VALUE);
        } else {
            volume.freeChain(d.contentChain);
        }
        volume.loadXattrs(d);
        volume.freeChain(d.xattrChain);
        volume.removeDinode(d);
    }

    /**
     * GFS2's {@code gfs2_fitrim}, with the arguments checked as xfs-like checks them (the range must start
     * inside the file system and cover a block; it is clipped to the file system; {@code minLength} is
     * rounded up to whole blocks, at least one). Refused on a read-only device. The running transaction is
     * committed first, so blocks freed before the call are durably free; then, one resource group at a
     * time, holding {@code meta} and, on a cluster node, the group's glock in EX (no node allocates there
     * meanwhile, and the nodes that did committed and wrote their changes home when they gave the glock
     * up), every run of the group's blocks that are free and not freed by a running transaction
     * ({@link ResourceGroup#usable}) is discarded where it overlaps the range by at least the minimum.
     * Blocks allocated by a running transaction are used in memory, so never discarded either. Discards go
     * to the mount's device (a cluster node's fenced one). Counted in {@code trim.bytes}.
     */
    @Override
    public long trim(long start, long length, long minLength) throws IOException {
        checkLive();
        long bs = blockSize();
        long total = volume.layout.totalBlocks();
        if (start < 0 || minLength < 0 || length < bs || start >= total * bs) {
            throw new InvalidRangeException("gfs2-like: trim of " + length + " bytes at " + start + " (extents of at"
                    + " least " + minLength + "): the range must start inside the " + total * bs
                    + "-byte file system and cover a block");
        }
        if (volume.device.readOnly()) {
            throw new ReadOnlyDeviceException("gfs2-like: trim on a read-only device");
        }
        long first = start / bs;
        long end = Math.min(total, first + Math.ceilDiv(Math.min(length, total * bs - first * bs), bs));
        long minBlocks = Math.max(1, Math.ceilDiv(minLength, bs));
        tx.commit();
        long trimmed = 0;
        for (int g = 0; g < volume.layout.rgCount(); g++) {
            long rgStart = volume.layout.rgStart(g);
            if (rgStart < end && rgStart + volume.layout.rgLength(g) > first) {
                trimmed += trimGroup(g, first, end, minBlocks);
            }
        }
        return trimmed;
    }

    /**
     * Discards the usable free runs of group {@code g} inside {@code [first, end)} of at least
     * {@code minBlocks}, holding the group's glock (cluster nodes, {@link NodeLocks#lockRgrp}) and {@code meta}.
     *
     * @return bytes discarded
     */
    private long trimGroup(int g, long first, long end, long minBlocks) throws IOException {
        checkLive();
        node.lockRgrp(g);
        try {
            return read(() -> discardFree(volume.rgs[g], first, end, minBlocks));
        } finally {
            node.unlockRgrps();
        }
    }

    /** @return bytes discarded of {@code rg}'s usable runs inside {@code [first, end)}; caller holds {@code meta} */
    private long discardFree(ResourceGroup rg, long first, long end, long minBlocks) throws IOException {
        long bs = blockSize();
        long stop = Math.min(end, rg.start + rg.length);
        long trimmed = 0;
        long b = Math.max(first, rg.dataStart());
        while (b < stop) {
            if (!rg.usable(b)) {
                b++;
                continue;
            }
            long e = b + 1;
            while (e < stop && rg.usable(e)) {
                e++;
            }
            if (e - b >= minBlocks) {
                volume.device.discard(b * bs, (e - b) * bs);
                trimmedBytes.addAndGet((e - b) * bs);
                trimmed += (e - b) * bs;
            }
            b = e;
        }
        return trimmed;
    }

    @Override
    public void unmount() throws IOException {
        checkLive();
        sync();
        iopen.unmounting();
        glocks.close();
        closed = true;
        tx.meta.lock();
        try {
            volume.journal.checkpoint();
        } finally {
            tx.meta.unlock();
        }
        node.leave();
    }

    /** The flags of the cached dinode (read once, then kept), under the inode's glock in SH on a cluster node. */
    @Override
    public Set<FileFlag> getflags(long ino) throws IOException {
        return node.glocked(NodeLocks.Plan.shared(ino), () -> read(() -> volume.dinode(ino).fileFlags()));
    }

    /**
     * Sets the dinode's flags word ({@link Dinode#flagBits}) and ctime in the running transaction, under
     * the inode's glock in EX on a cluster node: durable with the next commit (fsync, sync). When
     * {@link FileFlag#JOURNAL_DATA} changes, the file's cached data is written back and its size recorded,
     * and the transaction committed, under the old mode first ({@code gfs2_set_inode_flags}).
     */
    @Override
    public void setflags(long ino, Optional<IomapInode> cached, Set<FileFlag> flags) throws IOException {
        checkLive();
        for (FileFlag flag : flags) {
            if (!Dinode.keeps(flag)) {
                throw new NotSupportedException("inode flags " + flags + " are not supported");
            }
        }
        int bits = Dinode.flagBits(flags);
        node.glocked(NodeLocks.Plan.exclusive(ino), () -> {
            boolean jdataChanges = read(() -> volume.dinode(ino).jdata()) != flags.contains(FileFlag.JOURNAL_DATA);
            if (jdataChanges) {
                if (cached.isPresent()) {
                    cached.get().writeAndWait(0, Long.MAX_VALUE);
                    syncSize(cached.get());
                }
                tx.commit();
            }
            return change(() -> {
                Dinode d = volume.dinode(ino);
                d.flags = (d.flags & ~Dinode.FILE_FLAG_BITS) | bits;
                d.ctime = Instant.now();
                volume.dirtyDinode(d);
                return null;
            });
        });
    }

    /** @return see {@link MountCounters#of} */
    @Override
    public Map<String, Long> counters() {
        Map<String, Long> counters = new java.util.LinkedHashMap<>(
                MountCounters.of(volume.journal.stats(), glocks, tx, trimmedBytes.get(), node.clusterCounters()));
        if (node.clustered()) {
            counters.putAll(new java.util.TreeMap<>(iopen.counters()));
        }
        return counters;
    }

    /** @return the UUID mkfs wrote, or the one derived for an older image ({@link Gfs2Layout#filesystemUuid}) */
    @Override
    public Optional<java.util.UUID> uuid() throws IOException {
        return Optional.of(volume.layout.filesystemUuid(volume.device));
    }

    @Override
    public String label() throws IOException {
        checkLive();
        return volume.layout.label();
    }

    /**
     * Refused: every node of a cluster reads the superblock once, at mount, so a label changed by one
     * would be stale on the others; GFS2's label, likewise, changes only on an unmounted device
     * ({@code tunegfs2 -L}). mkfs sets it ({@code iomap mkfs --label}).
     */
    @Override
    public void setLabel(String label) throws IOException {
        throw new NotSupportedException("gfs2-like: the label is set by mkfs only, on a device no node has mounted"
                + " (as tunegfs2 -L changes GFS2's)");
    }
}
