package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.adapter.support.Journal;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import dev.iomap.api.NoSpaceException;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.IomapInode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;
import java.util.function.Supplier;

/**
 * The metadata of one mount: resource groups, cached dinodes and indirect blocks, and the running
 * transaction (the blocks it dirtied, the inodes whose new blocks need their data written first, the
 * blocks it freed). Callers hold {@link Gfs2Transactions#meta} around every method here.
 */
final class Gfs2Volume {
    final BlockDevice device;
    final Gfs2Layout layout;
    final Journal journal;
    final ResourceGroup[] rgs;
    final int blockSize;
    private final Map<Long, Dinode> dinodes = new HashMap<>();
    private final Map<Long, Indirect> indirects = new HashMap<>();
    /** Blocks the running transaction changed, each with how to encode its newest image. */
    final Map<Long, Supplier<ByteBuffer>> dirty = new LinkedHashMap<>();
    /** Inodes with blocks allocated in the running transaction whose data must reach the device first. */
    final Map<Long, IomapInode> ordered = new LinkedHashMap<>();
    /** File blocks allocated by the running transaction, per inode: {@code [start, end)} ranges. */
    final Map<Long, List<long[]>> newBlocks = new HashMap<>();
    /** Per-inode multi-block reservations: {@code ino -> [next, end)}. */
    private final Map<Long, long[]> reservations = new HashMap<>();
    /** Cluster nodes: groups whose copy must be read again before use. */
    private final boolean[] stale;
    /** Cluster nodes: whether the calling thread holds a group's glock; null on a single node. */
    private IntPredicate held;
    /** Blocks freed by the running transaction, not reusable before it commits. */
    private long pendingFrees;

    Gfs2Volume(BlockDevice device, Gfs2Layout layout, Journal journal, ResourceGroup[] rgs) {
        this.device = device;
        this.layout = layout;
        this.journal = journal;
        this.rgs = rgs;
        this.blockSize = layout.blockSize();
        this.stale = new boolean[rgs.length];
    }

    /**
     * Loads every resource group through the journal.
     *
     * @param journal a replayed journal
     * @param layout the layout
     * @return the groups
     * @throws IOException if a block is damaged or the device fails
     */
    static ResourceGroup[] loadRgrps(Journal journal, Gfs2Layout layout) throws IOException {
        ResourceGroup[] rgs = new ResourceGroup[layout.rgCount()];
        for (int g = 0; g < rgs.length; g++) {
            rgs[g] = loadRgrp(journal, layout, g);
        }
        return rgs;
    }

    private static ResourceGroup loadRgrp(Journal journal, Gfs2Layout layout, int g) throws IOException {
        long start = layout.rgStart(g);
        long length = layout.rgLength(g);
        MetadataBlock header = MetadataBlock.decode(journal.readBlock(start), start, Gfs2Layout.RGRP_TYPE);
        MetadataBlock[] bitmaps = new MetadataBlock[layout.bitmapBlocks(length)];
        for (int i = 0; i < bitmaps.length; i++) {
            bitmaps[i] = MetadataBlock.decode(journal.readBlock(start + 1 + i), start + 1 + i, Gfs2Layout.BITMAP_TYPE);
        }
        return ResourceGroup.decode(header, bitmaps, layout.blocksPerBitmap(), g, start, length);
    }

    /**
     * Makes this a node of a cluster: every resource group's copy is stale until its glock is taken,
     * allocations use only the groups {@code held} says the calling thread holds, and changing a group
     * the thread does not hold is a bug that throws.
     *
     * @param held whether the calling thread holds a group's glock
     */
    void cluster(IntPredicate held) {
        this.held = held;
        java.util.Arrays.fill(stale, true);
    }

    /** @return whether this volume is a node of a cluster ({@link #cluster}) */
    boolean clustered() {
        return held != null;
    }

    /**
     * A resource group's glock was demoted: its copy is stale, and this node's reservations in it are
     * given up (another node may allocate there now).
     *
     * @param g the group
     */
    void invalidateRgrp(int g) {
        stale[g] = true;
        reservations.entrySet().removeIf(e -> layout.rgOf(e.getValue()[0]) == g);
    }

    /**
     * Reads again, from the device, every group the calling thread holds whose copy is stale.
     *
     * @throws IOException if a block is damaged or the device fails
     */
    void refreshRgrps() throws IOException {
        for (int g = 0; g < rgs.length; g++) {
            if (stale[g] && held.test(g)) {
                rgs[g] = loadRgrp(journal, layout, g);
                stale[g] = false;
            }
        }
    }

    /** @return the group holding {@code block} */
    ResourceGroup rg(long block) {
        return rgs[layout.rgOf(block)];
    }

    /** @return the bitmap state of {@code block} */
    int state(long block) {
        return rg(block).state(block);
    }

    /**
     * Sets a block's bitmap state in the running transaction.
     *
     * @param block the block
     * @param state its state
     */
    void setState(long block, int state) {
        ResourceGroup rg = changing(block);
        rg.set(block, state);
        dirtyBitmap(rg, block);
    }

    /** @return the group of {@code block}, checked to be held by the calling thread on a cluster node */
    private ResourceGroup changing(long block) {
        int g = layout.rgOf(block);
        if (held != null && (!held.test(g) || stale[g])) {
            throw new IllegalStateException("resource group " + g + " changed (block " + block
                    + ") without its glock or with a stale copy");
        }
        return rgs[g];
    }

    private void dirtyBitmap(ResourceGroup rg, long block) {
        int perBitmap = layout.blocksPerBitmap();
        long bitmap = rg.bitmapBlockOf(block, perBitmap);
        int i = (int) (bitmap - rg.start - 1);
        dirty.put(rg.start, () -> rg.encodeHeader(blockSize));
        dirty.put(bitmap, () -> rg.encodeBitmap(i, blockSize, perBitmap));
    }

    /**
     * Frees {@code block} in the running transaction; it is not reused before that commits.
     *
     * @param block a used block
     */
    void free(long block) {
        ResourceGroup rg = changing(block);
        rg.freePending(block);
        pendingFrees++;
        dirtyBitmap(rg, block);
        dirty.remove(block);
        indirects.remove(block);
    }

    /**
     * Adds the newest bytes of a journaled data block to the running transaction. The volume keeps them
     * only until that transaction commits (or the block is logged at writeback or freed first), so
     * journaled data held in memory is bounded by the transaction, as jbd2's buffers are.
     *
     * @param block the device block
     * @param bytes one block, owned by the volume from now on
     */
    void logData(long block, byte[] bytes) {
        dirty.put(block, new DataImage(bytes));
    }

    /**
     * The newest bytes of a journaled data block in the running transaction: what {@link #dirty} holds for
     * such a block, so a commit can tell data from metadata.
     *
     * @param bytes one block
     */
    record DataImage(byte[] bytes) implements Supplier<ByteBuffer> {
        @Override
        public ByteBuffer get() {
            return ByteBuffer.wrap(bytes);
        }
    }

    /**
     * Allocates a run of blocks for {@code owner}: from its reservation if it has one, else a new
     * reservation of at least {@code want} blocks (32 or more for files) in the group of {@code near}
     * or the next with a free run.
     *
     * @param owner the inode the blocks are for
     * @param near a block to allocate close to
     * @param want the most blocks wanted, at least 1
     * @param state {@link ResourceGroup#USED} or {@link ResourceGroup#DINODE}
     * @return {@code {start, length}}, length from 1 to {@code want}
     * @throws NoSpaceException if no block is free
     */
    long[] allocate(long owner, long near, long want, int state) throws NoSpaceException {
        long[] run = state == ResourceGroup.USED ? fromReservation(owner, want) : null;
        if (run == null) {
            run = search(near, state == ResourceGroup.USED ? Math.max(want, 32) : 1);
            if (state == ResourceGroup.USED && run[1] > want) {
                ResourceGroup rg = rg(run[0]);
                long[] old = reservations.put(owner, new long[] {run[0] + want, run[0] + run[1]});
                if (old != null) {
                    rg(old[0]).unreserve(old[0], old[1]);
                }
                rg.reserve(run[0] + want, run[0] + run[1]);
                run = new long[] {run[0], want};
            }
        }
        for (long b = run[0]; b < run[0] + run[1]; b++) {
            setState(b, state);
        }
        return run;
    }

    private long[] fromReservation(long owner, long want) {
        long[] r = reservations.get(owner);
        if (r == null || (held != null && !held.test(layout.rgOf(r[0])))) {
            return null;
        }
        ResourceGroup rg = rg(r[0]);
        long b = r[0];
        long e = b;
        while (e < r[1] && e - b < want && rg.usable(e)) {
            e++;
        }
        if (e == b) {
            dropReservation(owner);
            return null;
        }
        rg.unreserve(b, e);
        r[0] = e;
        if (r[0] >= r[1]) {
            reservations.remove(owner);
        }
        return new long[] {b, e - b};
    }

    /** Gives back what remains of {@code owner}'s reservation. */
    void dropReservation(long owner) {
        long[] r = reservations.remove(owner);
        if (r != null) {
            rg(r[0]).unreserve(r[0], r[1]);
        }
    }

    /**
     * Finds a run for a new allocation: in the blocks no reservation holds, else, when only reserved
     * blocks are left, in those too (a reservation is a hint for its owner's next writes, not an
     * allocation: {@code gfs2_alloc_blocks} searches again ignoring it rather than fail).
     */
    private long[] search(long near, long want) throws NoSpaceException {
        long[] run = search(near, want, false);
        if (run == null && !reservations.isEmpty()) {
            run = search(near, want, true);
        }
        if (run == null) {
            throw new NoSpaceException("no free block left in " + rgs.length + " resource groups"
                    + (pendingFrees > 0 ? " until the running transaction commits the " + pendingFrees + " it freed" : ""));
        }
        return run;
    }

    private long[] search(long near, long want, boolean takeReserved) {
        int first = near >= layout.rgStart() && near < layout.totalBlocks() ? layout.rgOf(near) : 0;
        long[] best = null;
        for (int k = 0; k < rgs.length; k++) {
            int g = (first + k) % rgs.length;
            if (held != null && !held.test(g)) {
                continue;
            }
            ResourceGroup rg = rgs[g];
            long[] run = rg.findRun(k == 0 ? near : rg.dataStart(), want, takeReserved);
            if (run == null && k == 0) {
                run = rg.findRun(rg.dataStart(), want, takeReserved);
            }
            if (run != null && run[1] == want) {
                return run;
            }
            if (run != null && (best == null || run[1] > best[1])) {
                best = run;
            }
        }
        return best;
    }

    /**
     * Whether an operation that may allocate {@code want} blocks should commit the running transaction
     * first: it freed blocks, which are reusable only once it commits, and without them fewer than
     * {@code want} are free (GFS2's {@code gfs2_inplace_reserve} flushes the log for the same reason
     * before it gives up).
     *
     * @param want blocks the operation may allocate
     * @return whether committing would make room that is not there now
     */
    boolean needsFreedBlocks(long want) {
        return pendingFrees > 0 && freeBlocks() - pendingFrees < want;
    }

    /**
     * @param g a resource group
     * @param blocks how many blocks an operation may allocate
     * @return whether group {@code g} has at least {@code blocks} available blocks (free, in no reservation,
     *     not freed by the running transaction), so that the operation can allocate them all there
     */
    boolean hasRoom(int g, long blocks) {
        ResourceGroup rg = rgs[g];
        if (rg.free() < blocks) {
            return false;
        }
        long found = 0;
        long from = rg.dataStart();
        while (found < blocks) {
            long[] run = rg.findRun(from, blocks - found, false);
            if (run == null) {
                return false;
            }
            found += run[1];
            from = run[0] + run[1];
        }
        return true;
    }

    /** @return free blocks on the device (held by reservations included, freed by the running transaction not) */
    long freeBlocks() {
        long free = 0;
        for (ResourceGroup rg : rgs) {
            free += rg.free();
        }
        return free;
    }

    /**
     * @param ino a dinode block
     * @return the dinode, from the cache or read through the journal (with its directory entries or
     *     link target; its extended attributes are read by {@link #loadXattrs} when asked for)
     * @throws IOException if it is not a dinode or the device fails
     */
    Dinode dinode(long ino) throws IOException {
        Dinode d = dinodes.get(ino);
        if (d != null) {
            return d;
        }
        if (ino < layout.rgStart() || ino >= layout.totalBlocks()
                || (held == null && state(ino) < ResourceGroup.UNLINKED)) {
            throw new java.nio.file.NoSuchFileException("inode " + ino);
        }
        d = readDinode(ino);
        dinodes.put(ino, d);
        return d;
    }

    /**
     * Reads a dinode and its content chain through the journal without caching them (fsck's read).
     *
     * @param ino a dinode block in the data area
     * @return the dinode, its extended attributes not loaded
     * @throws IOException if a block is damaged or the device fails
     */
    Dinode readDinode(long ino) throws IOException {
        Dinode d = Dinode.decode(MetadataBlock.decode(journal.readBlock(ino), ino, Gfs2Layout.DINODE_TYPE), layout);
        if (d.type != FileType.REGULAR && d.height > 0) {
            d.content = new byte[d.chainedLength];
            d.contentChain = readChain(d.pointers[0], d.content, ino, "content");
        }
        return d;
    }

    /**
     * Reads a dinode's extended attribute chain if it has not been read yet.
     *
     * @param d the inode
     * @throws IOException if a chain block is damaged or the device fails
     */
    void loadXattrs(Dinode d) throws IOException {
        if (d.xattrs == null) {
            byte[] bytes = new byte[d.xattrLength];
            d.xattrChain = readChain(d.xattrHead, bytes, d.ino, "attribute");
            d.xattrs = bytes;
        }
    }

    /** Drops a clean dinode and its indirect blocks from the cache (a glock invalidation). */
    void forget(long ino) {
        if (dirty.containsKey(ino)) {
            return;
        }
        dinodes.remove(ino);
        indirects.values().removeIf(i -> i.owner == ino && !dirty.containsKey(i.blockNo));
    }

    /** @return how many dinodes are cached */
    int cachedDinodes() {
        return dinodes.size();
    }

    /**
     * Reads a chain into {@code bytes}, each block once: every block must be of the chain type, in the
     * data area, owned by {@code owner}, hold exactly its share of the bytes, and the last end the chain.
     */
    private long[] readChain(long head, byte[] bytes, long owner, String what) throws IOException {
        int capacity = Chain.capacity(blockSize);
        int count = Chain.blocksFor(bytes.length, blockSize);
        long[] chain = new long[count];
        long b = head;
        String name = "inode " + owner + " " + what + " chain";
        for (int i = 0; i < count; i++) {
            layout.checkPointer(b, name + " block " + i);
            if (b == 0) {
                throw new CorruptFileSystemException(name + " ends after " + i + " of " + count + " blocks");
            }
            chain[i] = b;
            Chain.Link link = Chain.decode(MetadataBlock.decode(journal.readBlock(b), b, Gfs2Layout.CHAIN_TYPE));
            int share = Math.min(capacity, bytes.length - i * capacity);
            if (link.owner() != owner || link.bytes().length != share) {
                throw new CorruptFileSystemException(name + " block " + i + " (block " + b + ") belongs to inode "
                        + link.owner() + " and holds " + link.bytes().length + " bytes, expected " + share);
            }
            System.arraycopy(link.bytes(), 0, bytes, i * capacity, share);
            b = link.next();
        }
        if (b != 0) {
            throw new CorruptFileSystemException(name + " goes on past its " + count + " blocks to block " + b);
        }
        return chain;
    }

    /** Caches a new dinode and dirties it. */
    void add(Dinode d) {
        dinodes.put(d.ino, d);
        dirtyDinode(d);
    }

    /** Marks a dinode changed in the running transaction. */
    void dirtyDinode(Dinode d) {
        dirty.put(d.ino, () -> d.encode(blockSize));
    }

    /** Frees a dinode block (its data, chains and tree are freed by the caller). */
    void removeDinode(Dinode d) {
        dropReservation(d.ino);
        dinodes.remove(d.ino);
        ordered.remove(d.ino);
        newBlocks.remove(d.ino);
        free(d.ino);
    }

    /**
     * @param block an indirect block of {@code owner}
     * @return it, cached or read through the journal
     * @throws IOException if it is damaged or the device fails
     */
    Indirect indirect(long block, long owner) throws IOException {
        Indirect i = indirects.get(block);
        if (i != null) {
            return i;
        }
        i = readIndirect(block, owner);
        indirects.put(block, i);
        return i;
    }

    /**
     * Reads an indirect block through the journal without caching it (fsck's read).
     *
     * @param block an indirect block of {@code owner}
     * @param owner the inode whose tree reaches it
     * @return it
     * @throws IOException if it is damaged, another inode's, or the device fails
     */
    Indirect readIndirect(long block, long owner) throws IOException {
        Indirect i = Indirect.decode(MetadataBlock.decode(journal.readBlock(block), block, Gfs2Layout.INDIRECT_TYPE),
                layout);
        if (i.owner != owner) {
            throw new CorruptFileSystemException("indirect block " + block + " belongs to inode " + i.owner
                    + ", reached from inode " + owner);
        }
        return i;
    }

    /** Caches a new indirect block and dirties it. */
    Indirect newIndirect(long block, long owner, int level) {
        Indirect i = new Indirect(block, owner, level, layout.indirectPointers());
        indirects.put(block, i);
        dirtyIndirect(i);
        return i;
    }

    /** Marks an indirect block changed in the running transaction. */
    void dirtyIndirect(Indirect i) {
        dirty.put(i.blockNo, () -> i.encode(blockSize));
    }

    /**
     * Stores a directory's entries or a link's target: stuffed while it fits, else in a chain.
     *
     * @param d the inode
     * @param bytes the new content
     * @throws NoSpaceException if chain blocks cannot be allocated
     */
    void setContent(Dinode d, byte[] bytes) throws NoSpaceException {
        d.content = bytes;
        if (bytes.length <= layout.stuffedCapacity()) {
            freeChain(d.contentChain);
            d.blocks -= d.contentChain.length;
            d.contentChain = new long[0];
            d.height = 0;
            Arrays.fill(d.inline, (byte) 0);
            System.arraycopy(bytes, 0, d.inline, 0, bytes.length);
        } else {
            d.contentChain = resizeChain(d, d.contentChain, Chain.blocksFor(bytes.length, blockSize));
            d.height = 1;
            Arrays.fill(d.pointers, 0);
            d.pointers[0] = d.contentChain[0];
            dirtyChain(d, d.contentChain, () -> d.content);
        }
        d.size = d.type == FileType.SYMLINK ? bytes.length : d.size;
        dirtyDinode(d);
    }

    /**
     * Stores a dinode's encoded extended attributes in their chain (none when empty).
     *
     * @param d the inode
     * @param bytes the encoded attributes
     * @throws NoSpaceException if chain blocks cannot be allocated
     * @throws IOException if the old chain cannot be read
     */
    void setXattrs(Dinode d, byte[] bytes) throws IOException {
        loadXattrs(d);
        d.xattrs = bytes;
        d.xattrChain = resizeChain(d, d.xattrChain, Chain.blocksFor(bytes.length, blockSize));
        d.xattrHead = d.xattrChain.length == 0 ? 0 : d.xattrChain[0];
        d.xattrLength = bytes.length;
        dirtyChain(d, d.xattrChain, () -> d.xattrs);
        dirtyDinode(d);
    }

    private long[] resizeChain(Dinode d, long[] old, int count) throws NoSpaceException {
        if (count <= old.length) {
            freeChain(Arrays.copyOfRange(old, count, old.length));
            d.blocks -= old.length - count;
            return Arrays.copyOf(old, count);
        }
        long[] chain = Arrays.copyOf(old, count);
        for (int i = old.length; i < count; i++) {
            chain[i] = allocate(d.ino, i == 0 ? d.ino : chain[i - 1], 1, ResourceGroup.USED)[0];
            d.blocks++;
        }
        return chain;
    }

    private void dirtyChain(Dinode d, long[] chain, Supplier<byte[]> bytes) {
        for (int i = 0; i < chain.length; i++) {
            int index = i;
            long next = i + 1 < chain.length ? chain[i + 1] : 0;
            dirty.put(chain[i], () -> Chain.encode(chain[index], d.ino, next, bytes.get(), index, blockSize));
        }
    }

    /** Frees the blocks of a chain. */
    void freeChain(long[] chain) {
        for (long b : chain) {
            free(b);
        }
    }

    /** @return the blocks freed by the running transaction, in every group */
    List<Long> pendingFrees() {
        List<Long> blocks = new ArrayList<>();
        for (ResourceGroup rg : rgs) {
            if (rg.hasPending()) {
                for (long b : rg.pendingBlocks()) {
                    blocks.add(b);
                }
            }
        }
        return blocks;
    }

    /** The running transaction committed: blocks it freed may be reused. */
    void releasePendingFrees() {
        for (ResourceGroup rg : rgs) {
            rg.releasePending();
        }
        pendingFrees = 0;
    }

    /** Most bytes of zeroes {@link #zeroData} writes at once. */
    private static final int ZERO_CHUNK_BYTES = 1 << 20;

    /**
     * Writes zeroes to data blocks {@code [block, block + count)}, in writes of up to 1 MiB (a newly
     * allocated run that is not to hold stale data: fallocate's, and direct I/O's into holes).
     *
     * @param block first device block
     * @param count blocks, at least 0
     * @throws IOException if the device fails
     */
    void zeroData(long block, long count) throws IOException {
        int perWrite = Math.max(1, ZERO_CHUNK_BYTES / blockSize);
        ByteBuffer zeroes = ByteBuffer.allocate((int) Math.min(count, perWrite) * blockSize);
        for (long done = 0; done < count; done += perWrite) {
            int blocks = (int) Math.min(perWrite, count - done);
            ByteBuffer chunk = zeroes.duplicate().limit(blocks * blockSize);
            BlockIo.write(device, block + done, chunk, dev.iomap.device.IoPurpose.DATA);
        }
    }

    /**
     * Writes {@code data} straight to a newly allocated block (an unstuffed file's first block: it
     * reaches the device before the commit that makes it part of the file, as ordered data does).
     *
     * @param block the block
     * @param data the bytes, at most a block
     * @throws IOException if the device fails
     */
    void writeData(long block, byte[] data) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(blockSize);
        buffer.put(data, 0, Math.min(data.length, blockSize)).clear();
        BlockIo.write(device, block, buffer, dev.iomap.device.IoPurpose.DATA);
    }
}
