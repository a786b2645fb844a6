package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.CorruptFileSystemException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One indirect block of a file's tree in memory: the owner's inode number, its level (1 for blocks
 * whose pointers address data) and {@link Gfs2Layout#indirectPointers()} block pointers (0 = hole). Not
 * thread-safe: the mount's metadata lock guards it.
 */
final class Indirect {
    /** Bytes before the pointers: u32 level, u32 zero, u64 owner. */
    static final int HEADER_BYTES = 16;

    final long blockNo;
    final long owner;
    final int level;
    final long[] pointers;

    Indirect(long blockNo, long owner, int level, int count) {
        this.blockNo = blockNo;
        this.owner = owner;
        this.level = level;
        this.pointers = new long[count];
    }

    /**
     * @param blockSize the block size
     * @return the block image
     */
    ByteBuffer encode(int blockSize) {
        ByteBuffer p = ByteBuffer.allocate(MetadataBlock.maxPayload(blockSize)).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(level).putInt(0).putLong(owner);
        for (long pointer : pointers) {
            p.putLong(pointer);
        }
        p.clear();
        return Gfs2Layout.image(new MetadataBlock(Gfs2Layout.INDIRECT_TYPE, blockNo, 0, p), blockSize);
    }

    /**
     * @param block a verified indirect block
     * @param layout the layout (pointers per block, where pointers may point)
     * @return its contents
     * @throws CorruptFileSystemException if the payload is not a whole block's, the level is out of
     *     range or a pointer is neither 0 nor in the resource groups' data area
     */
    static Indirect decode(MetadataBlock block, Gfs2Layout layout) throws CorruptFileSystemException {
        ByteBuffer p = block.payload().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int expected = MetadataBlock.maxPayload(layout.blockSize());
        if (p.remaining() != expected) {
            throw new CorruptFileSystemException("indirect block " + block.blockNo() + ": payload of " + p.remaining()
                    + " bytes, expected " + expected);
        }
        int count = layout.indirectPointers();
        int level = p.getInt();
        p.getInt();
        long owner = p.getLong();
        if (level < 1 || level > 16) {
            throw new CorruptFileSystemException("indirect block " + block.blockNo() + ": bad level " + level);
        }
        Indirect indirect = new Indirect(block.blockNo(), owner, level, count);
        for (int i = 0; i < count; i++) {
            indirect.pointers[i] = p.getLong();
            layout.checkPointer(indirect.pointers[i], "indirect block " + block.blockNo() + " pointer " + i);
        }
        return indirect;
    }
}
