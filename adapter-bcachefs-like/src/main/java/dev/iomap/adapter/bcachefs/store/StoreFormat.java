package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Geometry chosen when a store is formatted ({@link BtreeStore#format}). The node size is always the
 * device's block size.
 *
 * @param journalBlocks blocks of the journal ring, at least {@link #MIN_JOURNAL_BLOCKS}
 */
public record StoreFormat(long journalBlocks) {
    /** Fewest journal blocks a store has. */
    public static final long MIN_JOURNAL_BLOCKS = 64;
    /** Most journal blocks the default gives a large device. */
    public static final long MAX_DEFAULT_JOURNAL_BLOCKS = 16384;

    /** @throws IllegalArgumentException if {@code journalBlocks} is below {@link #MIN_JOURNAL_BLOCKS} */
    public StoreFormat {
        if (journalBlocks < MIN_JOURNAL_BLOCKS) {
            throw new IllegalArgumentException("a journal needs at least " + MIN_JOURNAL_BLOCKS
                    + " blocks, got " + journalBlocks);
        }
    }

    /**
     * @param device the device to format
     * @return the default: a journal of 1/64 of the device, at least {@link #MIN_JOURNAL_BLOCKS} and at
     *     most {@link #MAX_DEFAULT_JOURNAL_BLOCKS} blocks
     */
    public static StoreFormat defaults(BlockDevice device) {
        return defaults(device.blockSize(), device.capacity());
    }

    /**
     * @param blockSize the device's block size
     * @param capacity the device's size in bytes
     * @return the default for a device of that geometry (see {@link #defaults(BlockDevice)})
     */
    public static StoreFormat defaults(int blockSize, long capacity) {
        long blocks = capacity / blockSize;
        return new StoreFormat(Math.clamp(blocks / 64, MIN_JOURNAL_BLOCKS, MAX_DEFAULT_JOURNAL_BLOCKS));
    }

    /**
     * Checks, without a device, that {@link BtreeStore#format} accepts this geometry on a device of
     * {@code blockSize}-byte blocks and {@code capacity} bytes: the checks it makes before it writes.
     *
     * @param blockSize the device's block size
     * @param capacity the device's size in bytes
     * @throws IllegalArgumentException if the blocks are smaller than 1 KiB, or the device has no room
     *     for the superblocks, the journal and 64 blocks after it
     */
    public void check(int blockSize, long capacity) {
        long total = capacity / blockSize;
        if (blockSize < 1024) {
            throw new IllegalArgumentException("B-tree nodes need blocks of at least 1024 bytes, the device has "
                    + blockSize);
        }
        if (BcachefsSuperblock.COPIES + journalBlocks + 64 > total) {
            throw new IllegalArgumentException("device of " + total + " blocks is too small for a journal of "
                    + journalBlocks + " blocks");
        }
    }

    /**
     * Writes zeroes over the whole journal ring (an empty ring: replay stops at its first block). All of
     * it, not only the first block: on an image file the ring is then held by the host, so a journal
     * write never needs room the host may not have (a full host filesystem would otherwise fail a
     * commit, and the store with it, while the image has space).
     */
    private void writeEmptyRing(BlockDevice device) throws IOException {
        int blockSize = device.blockSize();
        int chunkBlocks = Math.max(1, (1 << 20) / blockSize);
        ByteBuffer zeroes = ByteBuffer.allocate(chunkBlocks * blockSize);
        for (long done = 0; done < journalBlocks; done += chunkBlocks) {
            int blocks = (int) Math.min(chunkBlocks, journalBlocks - done);
            BlockIo.write(device, BcachefsSuperblock.COPIES + done, zeroes.duplicate().limit(blocks * blockSize),
                    IoPurpose.METADATA);
        }
    }

    /**
     * Writes an empty store with this geometry (see {@link BtreeStore#format}), after {@link #check}.
     *
     * @param device the device
     * @throws IOException if the device fails
     */
    void write(BlockDevice device) throws IOException {
        int blockSize = device.blockSize();
        check(blockSize, device.capacity());
        long total = device.capacity() / blockSize;
        long dataStart = BcachefsSuperblock.COPIES + journalBlocks;
        long nonce = ThreadLocalRandom.current().nextLong();
        Node root = new Node(0);
        root.block = dataStart;
        BcachefsSuperblock first = new BcachefsSuperblock(1, blockSize, total, BcachefsSuperblock.COPIES, journalBlocks, nonce,
                dataStart, 0, 0, BcachefsSuperblock.COPIES, total - dataStart - 1, 1, "");
        BlockIo.write(device, dataStart, root.encode(blockSize, 1), IoPurpose.METADATA);
        writeEmptyRing(device);
        BlockIo.write(device, 1, ByteBuffer.allocate(blockSize), IoPurpose.METADATA);
        BlockIo.write(device, 0, first.encode(), IoPurpose.METADATA);
        device.flush();
    }
}
