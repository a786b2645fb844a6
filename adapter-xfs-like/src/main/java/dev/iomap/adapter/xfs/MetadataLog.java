package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.Journal;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.adapter.support.ns.ChainBlocks;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The running transaction: which metadata changed since the last commit, and the commit that encodes
 * it into block images and writes them through the journal, in the manner of XFS's delayed logging
 * (the CIL). Every operation changes the in-memory metadata under the metadata lock and records what
 * it touched here; a commit therefore always holds whole operations, and a crash leaves the state of
 * the last commit.
 *
 * <p>A commit happens at fsync, sync and unmount, when the running transaction grows past half of what
 * the journal takes in one transaction, and when freed blocks are needed. Before writing the journal
 * it flushes the device, so the data of every completed write (which the transaction may now declare
 * written) is durable before the metadata that points at it.
 *
 * <p>Used under the volume's metadata lock.
 */
final class MetadataLog {
    private final XfsVolume volume;
    private final XfsGeometry geometry;
    private final TreeSet<Long> dirtyInodes = new TreeSet<>();
    /**
     * The blocks {@link #commitIfLarge} counts for {@link #dirtyInodes}: its slot's share and its extent
     * list (listed blocks plus one it may grow by), tallied as each inode joins, so that the check costs
     * the same with ten thousand dirty inodes as with one (it walked them all before each change, and a
     * create of 10,000 files spent most of its time there). An inode's list blocks change only in
     * {@link #commit}, which empties the set, so the tally stays what a walk would count.
     */
    private long dirtyInodeBlocks;
    private final TreeSet<DirBlock> dirtyDirBlocks = new TreeSet<>();
    /** Inode table blocks to write besides those of the dirty inodes: newly initialised ones and block 0. */
    private final TreeSet<Long> dirtyTableBlocks = new TreeSet<>();
    /** Inodes whose symlink blocks must be written. */
    private final TreeSet<Long> dirtyAttached = new TreeSet<>();
    /** Inodes whose times {@link XfsLikeMount#updateTimes} changed without the metadata lock. */
    private final Set<Long> timesChanged = ConcurrentHashMap.newKeySet();
    private long commits;
    /**
     * Whether the running transaction may hold something fdatasync must commit (anything but times),
     * readable without the metadata lock: set before each such change is recorded, cleared only when a
     * commit has made every earlier change durable, or when the log is found holding none (both under
     * the metadata lock). Starts set, so the first fdatasync looks under the lock.
     */
    private volatile boolean dataPending = true;

    private record DirBlock(long ino, int block) implements Comparable<DirBlock> {
        @Override
        public int compareTo(DirBlock other) {
            int byIno = Long.compare(ino, other.ino);
            return byIno != 0 ? byIno : Integer.compare(block, other.block);
        }
    }

    MetadataLog(XfsVolume volume) {
        this.volume = volume;
        this.geometry = volume.geometry;
    }

    /** The inode's slot (and extent list) must be written. */
    void inodeChanged(InodeState inode) {
        markDataPending();
        addDirtyInode(inode.ino);
    }

    void inodeChanged(long ino) {
        markDataPending();
        addDirtyInode(ino);
    }

    /** The inode's slot and its symlink blocks must be written. */
    void attachedChanged(InodeState inode) {
        markDataPending();
        addDirtyInode(inode.ino);
        dirtyAttached.add(inode.ino);
    }

    private void addDirtyInode(long ino) {
        if (dirtyInodes.add(ino)) {
            InodeState inode = volume.inodes.get(ino);
            dirtyInodeBlocks += 2 + (inode == null ? 0 : inode.listBlocks.size());
        }
    }

    /**
     * The inode's times changed; the slot joins the next commit. The one method callable without the
     * metadata lock.
     */
    void timesChanged(long ino) {
        timesChanged.add(ino);
    }

    /**
     * @return whether so many inodes wait with changed times that they should be committed now: each may
     *     need its own inode table block, and a commit must fit one journal transaction
     */
    boolean timesPileUp() {
        return timesChanged.size() > volume.journal.maxTransactionBlocks() / 4;
    }

    /**
     * Inode table blocks {@code [from, to)} are written for the first time (all free but for the
     * inodes about to be created), and block 0 records that they are.
     */
    void tableBlocksInitialised(long from, long to) {
        markDataPending();
        dirtyTableBlocks.add(0L);
        for (long index = from; index < to; index++) {
            dirtyTableBlocks.add(index);
        }
    }

    void dirBlockChanged(long dirIno, int block) {
        markDataPending();
        dirtyDirBlocks.add(new DirBlock(dirIno, block));
    }

    private void markDataPending() {
        if (!dataPending) {
            dataPending = true;
        }
    }

    /**
     * Whether fdatasync has nothing to commit, answered without the metadata lock: no change but times
     * since the last commit, in the log or the allocator, and that commit is durable. Any change a
     * caller's data depends on (an unwritten conversion or size update of an ioend it waited for)
     * happened before this call and set a flag that only a later, durable commit clears; a change that
     * races this call is not one the caller waited for.
     *
     * @return true if {@link #commitForData} would have nothing to do
     */
    boolean nothingForData() {
        return !dataPending && !volume.allocator.changedSinceCommit();
    }

    boolean isEmpty() {
        return dirtyInodes.isEmpty() && dirtyDirBlocks.isEmpty() && dirtyTableBlocks.isEmpty()
                && !volume.allocator.hasDirtyGroups() && timesChanged.isEmpty();
    }

    /** @return commits so far */
    long commits() {
        return commits;
    }

    /**
     * fdatasync's commit: nothing if the running transaction holds only times set by
     * {@link #timesChanged} (they are not needed to read the data back, as XFS skips a timestamp-only
     * log force), else {@link #commit}.
     */
    void commitForData() throws IOException {
        if (dirtyInodes.isEmpty() && dirtyDirBlocks.isEmpty() && dirtyTableBlocks.isEmpty()
                && !volume.allocator.hasDirtyGroups()) {
            dataPending = false;
            volume.checkNotShutDown();
            return;
        }
        commit();
    }

    /** Commits if the running transaction has grown large; call at the end of an operation. */
    void commitIfLarge() throws IOException {
        long estimate = dirtyDirBlocks.size() + dirtyTableBlocks.size() + volume.allocator.changeEstimate()
                + timesChanged.size() + dirtyInodeBlocks;
        for (long ino : dirtyAttached) {
            InodeState inode = volume.inodes.get(ino);
            estimate += inode == null ? 0 : inode.attachedBlocks();
        }
        if (estimate > volume.journal.maxTransactionBlocks() / 2) {
            commit();
        }
    }

    /** Writes the running transaction to the journal and makes it durable. */
    void commit() throws IOException {
        volume.checkNotShutDown();
        if (isEmpty()) {
            return;
        }
        for (Long ino : List.copyOf(timesChanged)) {
            timesChanged.remove(ino);
            addDirtyInode(ino);
        }
        for (long ino : dirtyInodes) {
            InodeState inode = volume.inodes.get(ino);
            if (inode != null) {
                resizeExtentList(inode);
            }
        }
        long sequence = commits + 1;
        Map<Long, ByteBuffer> images = new LinkedHashMap<>();
        addInodeImages(images, sequence);
        addAttachedImages(images, sequence);
        addDirectoryImages(images, sequence);
        addGroupImages(images, sequence);
        volume.device.flush();
        long checkpointsBefore = volume.journal.stats().checkpoints();
        try (Journal.Transaction transaction = volume.journal.begin()) {
            for (var image : images.entrySet()) {
                transaction.log(image.getKey(), image.getValue());
            }
            transaction.commit();
        }
        boolean forced = volume.journal.stats().checkpoints() > checkpointsBefore;
        commits = sequence;
        dirtyInodes.clear();
        dirtyInodeBlocks = 0;
        dirtyDirBlocks.clear();
        dirtyTableBlocks.clear();
        dirtyAttached.clear();
        volume.allocator.clearDirty();
        dataPending = false;
        volume.allocator.committed(sequence, forced);
    }

    /** Commits, then writes every committed block home and empties the journal. */
    void checkpoint() throws IOException {
        commit();
        volume.checkNotShutDown();
        volume.journal.checkpoint();
        volume.allocator.checkpointed(commits);
    }

    /**
     * Gives the inode as many extent-list blocks as its extents need (none if they fit the slot). The
     * count of persisted extents changes only under the metadata lock, which the caller holds; the inode
     * lock guards the read against writers changing delayed allocations in the same maps.
     */
    private void resizeExtentList(InodeState inode) throws IOException {
        int count;
        inode.lock.lock();
        try {
            count = inode.persistedExtentCount();
        } finally {
            inode.lock.unlock();
        }
        int capacity = XfsLayout.extentListCapacity(geometry.blockSize());
        int needed = count <= XfsLayout.INLINE_EXTENTS ? 0 : Math.ceilDiv(count, capacity);
        while (inode.listBlocks.size() > needed) {
            volume.allocator.free(inode.listBlocks.removeLast(), 1, true);
            volume.space.release(1);
        }
        while (inode.listBlocks.size() < needed) {
            long near = inode.listBlocks.isEmpty() ? -1 : inode.listBlocks.getLast() + 1;
            volume.space.take(1, true);
            try {
                BlockRange block = volume.allocate(1, near);
                inode.listBlocks.add(block.start());
            } catch (IOException e) {
                volume.space.release(1);
                throw e;
            }
        }
    }

    private void addInodeImages(Map<Long, ByteBuffer> images, long sequence) {
        TreeSet<Long> tableBlocks = new TreeSet<>(dirtyTableBlocks);
        for (long ino : dirtyInodes) {
            tableBlocks.add(ino / geometry.inodesPerBlock());
        }
        for (long tableIndex : tableBlocks) {
            long block = geometry.inodeTableStart() + tableIndex;
            ByteBuffer payload = InodeCodec.encodeTableBlock(geometry, tableIndex, volume.initialisedTableBlocks,
                    volume.inodes::get);
            images.put(block, image(XfsLayout.INODE_TABLE, block, sequence, payload));
        }
        for (long ino : dirtyInodes) {
            InodeState inode = volume.inodes.get(ino);
            if (inode != null && !inode.listBlocks.isEmpty()) {
                addExtentList(images, inode, sequence);
            }
        }
    }

    private void addExtentList(Map<Long, ByteBuffer> images, InodeState inode, long sequence) {
        List<Extent> all = new ArrayList<>();
        inode.lock.lock();
        try {
            all.addAll(inode.persistedData());
            all.addAll(inode.persistedCow());
        } finally {
            inode.lock.unlock();
        }
        int capacity = XfsLayout.extentListCapacity(geometry.blockSize());
        for (int i = 0; i < inode.listBlocks.size(); i++) {
            long block = inode.listBlocks.get(i);
            long next = i + 1 < inode.listBlocks.size() ? inode.listBlocks.get(i + 1) : 0;
            List<Extent> chunk = all.subList(i * capacity, Math.min(all.size(), (i + 1) * capacity));
            images.put(block, image(XfsLayout.EXTENT_LIST, block, sequence,
                    InodeCodec.encodeListBlock(inode.ino, next, chunk)));
        }
    }

    /**
     * Adds every block of the symlink chains of the inodes that changed them. Extended-attribute chains
     * are never logged: {@link AttributeOps} writes them out of the journal, copy-on-write.
     */
    private void addAttachedImages(Map<Long, ByteBuffer> images, long sequence) {
        int capacity = XfsLayout.chainCapacity(geometry.blockSize());
        for (long ino : dirtyAttached) {
            InodeState inode = volume.inodes.get(ino);
            if (inode == null) {
                continue;
            }
            if (!inode.targetBlocks.isEmpty()) {
                addChain(images, sequence, XfsLayout.SYMLINK_BLOCK, inode.ino, inode.targetBlocks, inode.target, capacity);
            }
        }
    }

    private void addChain(Map<Long, ByteBuffer> images, long sequence, int type, long owner, List<Long> blocks,
            byte[] content, int capacity) {
        if (blocks.size() != XfsLayout.chainBlocks(content.length, geometry.blockSize())) {
            throw new IllegalStateException("inode " + owner + " has " + blocks.size() + " chain blocks for "
                    + content.length + " bytes");
        }
        for (int i = 0; i < blocks.size(); i++) {
            long block = blocks.get(i);
            long next = i + 1 < blocks.size() ? blocks.get(i + 1) : 0;
            images.put(block, image(type, block, sequence, ChainBlocks.encode(owner, next, i, content, capacity)));
        }
    }

    private void addDirectoryImages(Map<Long, ByteBuffer> images, long sequence) throws IOException {
        for (DirBlock dirty : dirtyDirBlocks) {
            InodeState dir = volume.inodes.get(dirty.ino());
            if (dir == null || dir.directory == null || dirty.block() >= dir.directory.blockCount()) {
                continue;
            }
            long block = ((Extent) dir.data.lookup(dirty.block())).deviceBlockOf(dirty.block());
            images.put(block, image(XfsLayout.DIRECTORY, block, sequence,
                    dir.directory.encodeBlock(dir.ino, dirty.block())));
        }
    }

    /** Adds the header of every changed group and the leaves that changed and hold records. */
    private void addGroupImages(Map<Long, ByteBuffer> images, long sequence) {
        BitSet dirty = volume.allocator.dirtyGroups();
        for (int agno = dirty.nextSetBit(0); agno >= 0; agno = dirty.nextSetBit(agno + 1)) {
            for (var entry : volume.allocator.group(agno).encodeChanged().entrySet()) {
                long block = entry.getKey();
                images.put(block, image(geometry.groupBlockType(agno, block), block, sequence, entry.getValue()));
            }
        }
    }

    private ByteBuffer image(int type, long block, long sequence, ByteBuffer payload) {
        try {
            return new MetadataBlock(type, block, sequence, payload).encode(geometry.blockSize());
        } catch (dev.iomap.api.InvalidRangeException e) {
            throw new IllegalStateException("metadata block " + block + " overflowed", e);
        }
    }
}
