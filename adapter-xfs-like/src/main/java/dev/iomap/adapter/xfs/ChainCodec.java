package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.BlockDevice;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Chains of metadata blocks holding an inode's byte string: a long symbolic-link target ({@code XSYM})
 * or the encoded extended attributes ({@code XATR}). Block {@code i} of a chain holds bytes
 * {@code [i × capacity, …)} of the string; every block but the last is full. Payload: owner inode (8),
 * next block (8, 0 at the end), index in the chain (4), bytes in this block (4), the bytes. Stateless.
 */
final class ChainCodec {

    private ChainCodec() {
    }

    /**
     * @param owner the inode
     * @param next the next block, 0 for the last
     * @param index this block's place in the chain
     * @param content the whole string
     * @param capacity bytes per block ({@link Layout#chainCapacity})
     * @return the payload of block {@code index}
     */
    static ByteBuffer encode(long owner, long next, int index, byte[] content, int capacity) {
        int from = index * capacity;
        int length = Math.min(capacity, content.length - from);
        BlockWriter writer = BlockWriter.allocate(Layout.CHAIN_HEADER + length, "xfs-like chain block");
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
     * @param device the device in filesystem blocks
     * @param geometry the geometry
     * @param type {@link Layout#SYMLINK_BLOCK} or {@link Layout#XATTR_BLOCK}
     * @param head the first block
     * @param owner the inode that points at it
     * @param maxBytes the longest string the chain may hold
     * @param blocks receives the chain's blocks, in order
     * @param where the inode, for messages
     * @return the string
     * @throws CorruptFilesystemException if a block is outside the data area, repeated, foreign or damaged
     */
    static byte[] read(BlockDevice device, Geometry geometry, int type, long head, long owner, int maxBytes,
            List<Long> blocks, String where) throws IOException {
        int capacity = Layout.chainCapacity(geometry.blockSize());
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        Set<Long> seen = new HashSet<>();
        long block = head;
        int lastCount = capacity;
        while (block != 0) {
            String at = where + ": " + (type == Layout.SYMLINK_BLOCK ? "symlink" : "xattr") + " block "
                    + blocks.size() + " at " + Layout.where(block, geometry.blockSize());
            if (block < geometry.dataStart() || block >= geometry.totalBlocks() || !seen.add(block)) {
                throw new CorruptFilesystemException(at + " is outside the data area or repeated");
            }
            if (lastCount != capacity || content.size() >= maxBytes) {
                throw new CorruptFilesystemException(at + " follows a block that is not full, or the chain holds "
                        + "more than " + maxBytes + " bytes");
            }
            BlockReader reader = MetadataBlock.read(device, block, type).reader();
            long storedOwner = reader.getLong();
            long next = reader.getLong();
            int index = reader.getInt();
            int count = reader.getInt();
            if (storedOwner != owner || index != blocks.size() || count < 1 || count > capacity
                    || count != reader.remaining()) {
                throw new CorruptFilesystemException(at + " says owner " + storedOwner + ", index " + index
                        + ", " + count + " bytes (" + reader.remaining() + " stored, at most " + capacity + ")");
            }
            content.writeBytes(reader.getBytes(count));
            blocks.add(block);
            lastCount = count;
            block = next;
        }
        if (content.size() > maxBytes) {
            throw new CorruptFilesystemException(where + ": its chain holds " + content.size()
                    + " bytes, more than " + maxBytes);
        }
        return content.toByteArray();
    }
}
