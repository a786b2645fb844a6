package dev.iomap.adapter.bcachefs;

import dev.iomap.spi.trace.ChecksumErrorEvent;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads data extents: a checksummed or compressed extent is read whole, its checksum verified over
 * the stored bytes and the data decompressed before any byte of it is handed out (bcachefs's
 * {@code bch2_read_extent} with {@code crc} checks); an extent with neither is read block by block.
 * A small LRU of verified extents, keyed by where the data lies and its checksum, keeps the read
 * amplification bounded when the core reads one folio of a large extent at a time. Thread-safe.
 *
 * <p>Blocks are reused: once an extent is freed, a new extent may land on its blocks with the same
 * length and checksum (with {@code checksum=none} every compressed extent's checksum is 0). bcachefs
 * tells the two apart by the bucket generation in each pointer; this format has none, so the
 * allocator's callers {@link #forget} the blocks they hand out before anything is written into them,
 * and a read that was in flight across such a {@code forget} does not keep what it read (an
 * allocation epoch, taken before the read and compared after).
 */
final class ExtentReader {
    /** Extents kept verified in memory. */
    static final int CACHED_EXTENTS = 32;

    private record CacheKey(long devStart, int physBlocks, int storedBytes, int compression, long checksum) {
    }

    private final BlockDevice device;
    private final int blockSize;
    private final Map<CacheKey, byte[]> verified = new LinkedHashMap<>(64, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<CacheKey, byte[]> eldest) {
            return size() > CACHED_EXTENTS;
        }
    };
    final AtomicLong checksumErrors = new AtomicLong();
    final AtomicLong extentReads = new AtomicLong();
    final AtomicLong cacheHits = new AtomicLong();
    /** Bumped by every {@link #forget}, under the cache's lock: a read that saw it change keeps nothing. */
    private long epoch;

    ExtentReader(BlockDevice device, int blockSize) {
        this.device = device;
        this.blockSize = blockSize;
    }

    /**
     * Copies {@code dst.remaining()} bytes (whole blocks) of an extent's file data into {@code dst}.
     *
     * @param e the extent
     * @param skip blocks of the key before the first wanted one
     * @param dst receives the data
     * @throws ChecksumException if the extent fails its checksum or does not decompress (nothing is copied)
     * @throws IOException if the device fails
     */
    void read(BcachefsVolume.Extent e, long skip, ByteBuffer dst) throws IOException {
        ExtentValue v = e.value();
        if (v.narrowable()) {
            device.read(v.deviceBlockOf(skip) * blockSize, dst);
            return;
        }
        byte[] data = verified(e);
        int from = Math.toIntExact((v.offset() + skip) * blockSize);
        dst.put(data, from, dst.remaining());
    }

    /**
     * @param e an extent with a checksum or compression
     * @return its whole uncompressed data, verified
     * @throws ChecksumException on a mismatch or bad compressed data (counted)
     */
    byte[] verified(BcachefsVolume.Extent e) throws IOException {
        ExtentValue v = e.value();
        CacheKey key = new CacheKey(v.devStart(), v.physBlocks(), v.storedBytes(), v.compression(), v.checksum());
        long readEpoch;
        synchronized (verified) {
            byte[] hit = verified.get(key);
            if (hit != null) {
                cacheHits.incrementAndGet();
                return hit;
            }
            readEpoch = epoch;
        }
        byte[] data;
        try {
            data = load(device, blockSize, e);
        } catch (ChecksumException ex) {
            checksumErrors.incrementAndGet();
            throw ex;
        }
        extentReads.incrementAndGet();
        synchronized (verified) {
            if (epoch == readEpoch) {
                verified.put(key, data);
            }
        }
        return data;
    }

    /**
     * Drops every cached extent stored in any of {@code blocks}: called when the allocator hands the
     * blocks out for new data, before anything is written there. A read in flight meanwhile is not
     * cached when it ends.
     *
     * @param blocks device blocks that are about to hold new data
     */
    void forget(BlockRange blocks) {
        synchronized (verified) {
            epoch++;
            verified.keySet().removeIf(k -> k.devStart() < blocks.end() && blocks.start() < k.devStart() + k.physBlocks());
        }
    }

    /**
     * Reads and verifies one extent without any cache (fsck's scrub).
     *
     * @param device the device
     * @param blockSize the block size
     * @param e the extent
     * @return the uncompressed data
     * @throws ChecksumException if it fails its checksum or does not decompress
     * @throws IOException if the device fails
     */
    static byte[] load(BlockDevice device, int blockSize, BcachefsVolume.Extent e) throws IOException {
        ExtentValue v = e.value();
        byte[] stored = new byte[v.physBlocks() * blockSize];
        device.read(v.devStart() * blockSize, ByteBuffer.wrap(stored));
        if (v.checksumType() != Codecs.CSUM_NONE) {
            long sum = Codecs.checksum(v.checksumType(), stored, v.storedBytes());
            if (sum != v.checksum()) {
                ChecksumErrorEvent.emit(e.ino(), e.start() * blockSize, v.devStart() * blockSize,
                        Codecs.checksumName(v.checksumType()), v.checksum(), sum);
                throw new ChecksumException("bcachefs-like: " + Codecs.checksumName(v.checksumType())
                        + " mismatch in the extent of inode " + e.ino() + " at file offset " + e.start() * blockSize
                        + " (device blocks " + v.devStart() + "+" + v.physBlocks() + "): stored "
                        + Long.toHexString(v.checksum()) + ", read " + Long.toHexString(sum));
            }
        }
        if (v.compression() == Codecs.COMPRESS_NONE) {
            return stored;
        }
        try {
            return Codecs.decompress(v.compression(), stored, v.storedBytes(), v.uncompressedBlocks() * blockSize);
        } catch (IOException ex) {
            throw new ChecksumException("bcachefs-like: the extent of inode " + e.ino() + " at file offset "
                    + e.start() * blockSize + " does not decompress: " + ex.getMessage());
        }
    }

    /** A data extent failed verification: the read fails with an I/O error (EIO) instead of returning its bytes. */
    static final class ChecksumException extends IOException {
        private static final long serialVersionUID = 1L;

        ChecksumException(String message) {
            super(message);
        }
    }
}
