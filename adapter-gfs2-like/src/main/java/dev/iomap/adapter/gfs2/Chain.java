package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.CorruptFileSystemException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A byte string kept in a chain of metadata blocks (a large directory, a long symbolic link target,
 * extended attributes). Each block: u64 owner, u64 next block (0 = last), u32 bytes here, the bytes.
 */
final class Chain {
    /** Bytes of a chain block's payload before its data. */
    static final int HEADER_BYTES = 20;

    private Chain() {
    }

    /** @return data bytes one chain block holds */
    static int capacity(int blockSize) {
        return MetadataBlock.maxPayload(blockSize) - HEADER_BYTES;
    }

    /** @return chain blocks needed for {@code length} bytes */
    static int blocksFor(int length, int blockSize) {
        return (length + capacity(blockSize) - 1) / capacity(blockSize);
    }

    /**
     * @param blockNo where the block goes
     * @param owner the inode
     * @param next the next chain block or 0
     * @param bytes the whole string
     * @param index which block of the chain
     * @param blockSize the block size
     * @return the image of chain block {@code index}
     */
    static ByteBuffer encode(long blockNo, long owner, long next, byte[] bytes, int index, int blockSize) {
        int capacity = capacity(blockSize);
        int from = index * capacity;
        int length = Math.min(capacity, bytes.length - from);
        ByteBuffer p = ByteBuffer.allocate(MetadataBlock.maxPayload(blockSize)).order(ByteOrder.LITTLE_ENDIAN);
        p.putLong(owner).putLong(next).putInt(length).put(bytes, from, length).clear();
        return Gfs2Layout.image(new MetadataBlock(Gfs2Layout.CHAIN_TYPE, blockNo, 0, p), blockSize);
    }

    /**
     * One decoded chain block.
     *
     * @param owner the inode
     * @param next the next block or 0
     * @param bytes the data here
     */
    record Link(long owner, long next, byte[] bytes) {
    }

    /**
     * @param block a verified chain block
     * @return its fields
     * @throws CorruptFileSystemException if its payload is shorter than the header or its length is impossible
     */
    static Link decode(MetadataBlock block) throws CorruptFileSystemException {
        ByteBuffer p = block.payload().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (p.remaining() < HEADER_BYTES) {
            throw new CorruptFileSystemException("chain block " + block.blockNo() + ": payload of " + p.remaining()
                    + " bytes, shorter than its " + HEADER_BYTES + "-byte header");
        }
        long owner = p.getLong();
        long next = p.getLong();
        int length = p.getInt();
        if (length < 0 || length > p.remaining()) {
            throw new CorruptFileSystemException("chain block " + block.blockNo() + ": bad length " + length);
        }
        byte[] bytes = new byte[length];
        p.get(bytes);
        return new Link(owner, next, bytes);
    }
}
