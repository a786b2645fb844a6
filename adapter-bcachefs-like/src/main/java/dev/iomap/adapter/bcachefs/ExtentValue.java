package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.CorruptFileSystemException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A data extent as its key {@code (EXTENTS, ino, end block)} holds it (bcachefs's {@code bch_extent}
 * with one pointer and one {@code crc} entry). The file blocks {@code [end - logicalBlocks, end)} are
 * blocks {@code [offset, offset + logicalBlocks)} of the extent's uncompressed data, which is stored in
 * device blocks {@code [devStart, devStart + physBlocks)}: the first {@code storedBytes} bytes there,
 * compressed or not, are what {@code checksum} covers.
 *
 * <p>A key holds one reference on every block of its physical range; a trimmed fragment of a
 * checksummed or compressed extent keeps the whole physical range (the checksum covers all of it),
 * so its blocks stay referenced while any fragment is. An extent without checksum and compression
 * ({@link #narrowable}) is trimmed to exactly its blocks.
 *
 * @param devStart first device block of the stored data
 * @param physBlocks device blocks of the stored data
 * @param storedBytes bytes of stored data (compressed length; {@code physBlocks * blockSize} if not compressed)
 * @param offset blocks of the uncompressed data before this key's first block
 * @param logicalBlocks file blocks the key covers
 * @param uncompressedBlocks blocks of the whole uncompressed data
 * @param checksumType a {@code Codecs.CSUM_*}
 * @param compression a {@code Codecs.COMPRESS_*}
 * @param checksum the checksum of the stored bytes
 */
record ExtentValue(long devStart, int physBlocks, int storedBytes, int offset, int logicalBlocks,
        int uncompressedBlocks, int checksumType, int compression, long checksum) {
    /** Encoded size. */
    static final int BYTES = 40;

    /** @return the key's value */
    byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(devStart).putInt(physBlocks).putInt(storedBytes).putInt(offset).putInt(logicalBlocks)
                .putInt(uncompressedBlocks).put((byte) checksumType).put((byte) compression).putShort((short) 0)
                .putLong(checksum);
        return b.array();
    }

    /**
     * @param where the key, for messages
     * @param value the key's value
     * @param blockSize the filesystem block size
     * @return the extent
     * @throws CorruptFileSystemException if the value is inconsistent
     */
    static ExtentValue decode(String where, byte[] value, int blockSize) throws CorruptFileSystemException {
        if (value.length != BYTES) {
            throw new CorruptFileSystemException(where + ": extent value of " + value.length + " bytes");
        }
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        long devStart = b.getLong();
        int phys = b.getInt();
        int stored = b.getInt();
        int offset = b.getInt();
        int logical = b.getInt();
        int uncompressed = b.getInt();
        int checksumType = b.get();
        int compression = b.get();
        b.getShort();
        ExtentValue e = new ExtentValue(devStart, phys, stored, offset, logical, uncompressed, checksumType,
                compression, b.getLong());
        boolean bad = e.devStart < 0 || e.physBlocks <= 0 || e.devStart > Long.MAX_VALUE - e.physBlocks
                || e.storedBytes <= 0
                || e.storedBytes > (long) e.physBlocks * blockSize || e.offset < 0 || e.logicalBlocks <= 0
                || (long) e.offset + e.logicalBlocks > e.uncompressedBlocks
                || e.checksumType < Codecs.CSUM_NONE || e.checksumType > Codecs.CSUM_XXHASH64
                || e.compression < Codecs.COMPRESS_NONE || e.compression > Codecs.COMPRESS_ZSTD
                || (e.compression == Codecs.COMPRESS_NONE && e.uncompressedBlocks != e.physBlocks);
        if (bad) {
            throw new CorruptFileSystemException(where + ": inconsistent extent " + e);
        }
        return e;
    }

    /** @return whether a trimmed fragment can drop the blocks it no longer covers (no checksum, no compression) */
    boolean narrowable() {
        return checksumType == Codecs.CSUM_NONE && compression == Codecs.COMPRESS_NONE;
    }

    /**
     * The blocks this key accounts for in its inode's block count, as bcachefs accounts live sectors:
     * its file blocks if stored uncompressed, its share of the compressed blocks otherwise (rounded up).
     * A trimmed fragment's other blocks stay allocated until the last fragment goes (there is no copygc).
     *
     * @return live blocks
     */
    long liveBlocks() {
        if (compression == Codecs.COMPRESS_NONE) {
            return logicalBlocks;
        }
        return Math.ceilDiv((long) physBlocks * logicalBlocks, uncompressedBlocks);
    }

    /** @return the device blocks this key holds a reference on */
    BlockRange physical() {
        return new BlockRange(devStart, physBlocks);
    }

    /**
     * The part of this extent that covers {@code blocks} file blocks starting {@code skip} blocks into
     * the key.
     *
     * @param skip blocks of the key before the fragment
     * @param blocks blocks in the fragment
     * @param blockSize the filesystem block size
     * @return the fragment's value
     */
    ExtentValue fragment(int skip, int blocks, int blockSize) {
        if (narrowable()) {
            return new ExtentValue(devStart + offset + skip, blocks, blocks * blockSize, 0, blocks, blocks,
                    checksumType, compression, 0);
        }
        return new ExtentValue(devStart, physBlocks, storedBytes, offset + skip, blocks, uncompressedBlocks,
                checksumType, compression, checksum);
    }

    /**
     * @param skip blocks of the key before the wanted one
     * @return the device block holding file block {@code skip} of the key, for an uncompressed extent
     */
    long deviceBlockOf(long skip) {
        return devStart + offset + skip;
    }
}
