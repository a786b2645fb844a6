package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.BtreeStore;
import dev.iomap.adapter.bcachefs.store.KeyStore;
import dev.iomap.adapter.bcachefs.store.RefRun;
import dev.iomap.adapter.bcachefs.store.StoreCheck;
import dev.iomap.adapter.bcachefs.store.StoreFormat;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/** The production {@link StoreAccess}: the copy-on-write B-tree store of package {@code store}. */
final class BtreeStoreAccess implements StoreAccess {
    /** The store superblock's magic ("BCHSTOR1" little-endian) at byte 0 of block 0. */
    static final long SUPERBLOCK_MAGIC = 0x31524f5453484342L;
    /** Byte offset of the block size in the store superblock. */
    static final int BLOCK_SIZE_OFFSET = 24;

    @Override
    public KeyStore format(BlockDevice device, Config config) throws IOException {
        try {
            BtreeStore.format(device, storeFormat(device.blockSize(), device.capacity(), config));
        } catch (IllegalArgumentException e) {
            throw new InvalidRangeException("bcachefs-like: " + e.getMessage());
        }
        return BtreeStore.open(device, false);
    }

    @Override
    public void checkFormat(int blockSize, long capacity, Config config) throws IOException {
        try {
            storeFormat(blockSize, capacity, config).check(blockSize, capacity);
        } catch (IllegalArgumentException e) {
            throw new InvalidRangeException("bcachefs-like: " + e.getMessage());
        }
    }

    /** The store's geometry: the journal size {@code config} gives, or the default for the device. */
    private static StoreFormat storeFormat(int blockSize, long capacity, Config config) {
        return config.journalBlocks() > 0 ? new StoreFormat(config.journalBlocks())
                : StoreFormat.defaults(blockSize, capacity);
    }

    @Override
    public KeyStore open(BlockDevice device, boolean readOnly) throws IOException {
        return BtreeStore.open(device, readOnly);
    }

    /**
     * Reads the first device block: the block size if copy 0 of the superblock has the magic (its
     * checksum is not checked, so a damaged superblock is still recognised), 0 if only copy 1 is a valid
     * superblock, -1 otherwise.
     */
    @Override
    public int probe(BlockDevice device) throws IOException {
        int bytes = device.blockSize();
        if (device.capacity() < bytes || bytes < BLOCK_SIZE_OFFSET + 4) {
            return -1;
        }
        ByteBuffer first = ByteBuffer.allocate(bytes);
        device.read(0, first);
        first.order(ByteOrder.LITTLE_ENDIAN);
        if (first.getLong(0) == SUPERBLOCK_MAGIC) {
            return Math.max(0, first.getInt(BLOCK_SIZE_OFFSET));
        }
        return BtreeStore.probe(device) ? 0 : -1;
    }

    @Override
    public boolean needsReplay(BlockDevice device) throws IOException {
        return BtreeStore.needsReplay(device);
    }

    @Override
    public List<String> check(BlockDevice device) throws IOException {
        return StoreCheck.check(device);
    }

    @Override
    public List<RefRun> refCounts(BlockDevice device) throws IOException {
        return StoreCheck.refCounts(device);
    }
}
