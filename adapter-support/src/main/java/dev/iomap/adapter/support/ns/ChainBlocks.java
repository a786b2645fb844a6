package dev.iomap.adapter.support.ns;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.BlockDevice;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Chains of {@link MetadataBlock}s holding one inode's byte string, such as a long symbolic-link target
 * or encoded extended attributes ({@link XattrSet}); the adapter chooses the block type (magic) of each
 * kind. Block {@code i} of a chain holds bytes {@code [i × capacity, …)} of the string, where capacity
 * is {@link #capacity}; every block but the last is full. Payload, little-endian: owner inode (u64),
 * next block (u64, 0 at the end), index in the chain (u32), bytes in this block (u32), the bytes.
 * Where the blocks come from and how they are written (journalled or not) is the adapter's business.
 * Stateless.
 */
public final class ChainBlocks {
    /** Bytes of a chain block's payload header: owner (8), next (8), index (4), bytes (4). */
    public static final int HEADER_BYTES = 24;

    private ChainBlocks() {
    }

    /**
     * @param blockSize the filesystem block size
     * @return bytes of the string one chain block holds
     */
    public static int capacity(int blockSize) {
        return MetadataBlock.maxPayload(blockSize) - HEADER_BYTES;
    }

    /**
     * @param bytes the length of a string
     * @param blockSize the filesystem block size
     * @return how many chain blocks hold it (0 for an empty string)
     */
    public static int blocksFor(int bytes, int blockSize) {
        return Math.ceilDiv(bytes, capacity(blockSize));
    }

    /**
     * @param owner the inode
     * @param next the next block of the chain, 0 for the last
     * @param index this block's place in the chain, 0 to {@code blocksFor(content.length) - 1}
     * @param content the whole string
     * @param capacity bytes per block ({@link #capacity})
     * @return the payload of block {@code index}
     * @throws IllegalArgumentException if {@code index} is outside the chain
     */
    public static ByteBuffer encode(long owner, long next, int index, byte[] content, int capacity) {
        int from = index * capacity;
        if (index < 0 || from >= content.length) {
            throw new IllegalArgumentException("block " + index + " is outside a chain of " + content.length
                    + " bytes");
        }
        int length = Math.min(capacity, content.length - from);
        BlockWriter writer = BlockWriter.allocate(HEADER_BYTES + length, "chain block");
        try {
            writer.putLong(owner).putLong(next).putInt(index).putInt(length);
            writer.putBytes(ByteBuffer.wrap(content, from, length));
        } catch (InvalidRangeException e) {
            throw new IllegalStateException("chain block overflowed", e);
        }
        return writer.written();
    }

    /**
     * Reads a whole chain, checking each block's checksum, type, owner, index and fill.
     *
     * @param device the device, in filesystem blocks
     * @param type the chain's block type ({@link MetadataBlock#magic})
     * @param kind what the chain holds, for messages (e.g. "symlink")
     * @param head the first block
     * @param owner the inode that points at it
     * @param maxBytes the longest string the chain may hold
     * @param area the blocks a chain block may be in
     * @param blocks receives the chain's blocks, in order
     * @param where the inode, for messages
     * @return the string
     * @throws CorruptFileSystemException if a block is outside {@code area}, repeated, foreign, damaged,
     *     follows a block that is not full, or the chain holds more than {@code maxBytes} bytes
     * @throws IOException if the device fails
     */
    public static byte[] read(BlockDevice device, int type, String kind, long head, long owner, int maxBytes,
            BlockRange area, List<Long> blocks, String where) throws IOException {
        int blockSize = device.blockSize();
        int capacity = capacity(blockSize);
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        Set<Long> seen = new HashSet<>();
        long block = head;
        int lastCount = capacity;
        while (block != 0) {
            String at = where + ": " + kind + " block " + blocks.size() + " at block " + block
                    + " (device offset " + block * blockSize + ")";
            if (!area.contains(block) || !seen.add(block)) {
                throw new CorruptFileSystemException(at + " is outside the data area or repeated");
            }
            if (lastCount != capacity || content.size() >= maxBytes) {
                throw new CorruptFileSystemException(at + " follows a block that is not full, or the chain holds "
                        + "more than " + maxBytes + " bytes");
            }
            BlockReader reader = MetadataBlock.read(device, block, type).reader();
            long storedOwner = reader.getLong();
            long next = reader.getLong();
            int index = reader.getInt();
            int count = reader.getInt();
            if (storedOwner != owner || index != blocks.size() || count < 1 || count > capacity
                    || count != reader.remaining()) {
                throw new CorruptFileSystemException(at + " says owner " + storedOwner + ", index " + index
                        + ", " + count + " bytes (" + reader.remaining() + " stored, at most " + capacity + ")");
            }
            content.writeBytes(reader.getBytes(count));
            blocks.add(block);
            lastCount = count;
            block = next;
        }
        if (content.size() > maxBytes) {
            throw new CorruptFileSystemException(where + ": its chain holds " + content.size()
                    + " bytes, more than " + maxBytes);
        }
        return content.toByteArray();
    }
}
