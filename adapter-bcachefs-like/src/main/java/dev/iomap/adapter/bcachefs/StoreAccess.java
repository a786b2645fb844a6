package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.KeyStore;
import dev.iomap.adapter.bcachefs.store.RefRun;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.util.List;

/**
 * How the adapter creates, opens, recognises and checks the metadata store on a device: the one seam
 * between the filesystem layer and the store's implementation ({@link BtreeStoreAccess} in production).
 */
interface StoreAccess {

    /**
     * Writes an empty store.
     *
     * @param device the device
     * @param config the filesystem's format options (the journal size among them)
     * @return the new store, open read-write
     * @throws IOException if the device is too small or fails
     */
    KeyStore format(BlockDevice device, Config config) throws IOException;

    /**
     * Checks, without a device, that {@link #format} accepts {@code config} on a device of this
     * geometry: every check it makes before it writes.
     *
     * @param blockSize the device's block size
     * @param capacity the device's size in bytes
     * @param config the filesystem's format options
     * @throws IOException if the device is too small for the store ({@link dev.iomap.api.InvalidRangeException})
     */
    void checkFormat(int blockSize, long capacity, Config config) throws IOException;

    /**
     * Opens a store (replaying its journal unless read-only).
     *
     * @param device the device
     * @param readOnly whether nothing may be written (fsck)
     * @return the store
     * @throws IOException if it is damaged ({@link dev.iomap.api.CorruptFileSystemException}) or the device fails
     */
    KeyStore open(BlockDevice device, boolean readOnly) throws IOException;

    /**
     * @param device the device
     * @return the block size its superblock records, or -1 if it does not carry this store's magic
     * @throws IOException if the device fails
     */
    int probe(BlockDevice device) throws IOException;

    /**
     * @param device the device, carrying this store
     * @return whether its journal holds entries after the last checkpoint, which a mount replays (an
     *     unmount checkpoints and leaves none)
     * @throws IOException if the superblock is damaged or the device fails
     */
    boolean needsReplay(BlockDevice device) throws IOException;

    /**
     * Checks the store's own structure (node checksums, key order, allocation).
     *
     * @param device the device
     * @return the problems found
     * @throws IOException if the device fails
     */
    List<String> check(BlockDevice device) throws IOException;

    /**
     * @param device the device
     * @return the data blocks with a non-zero reference count, as committed on the device
     * @throws IOException if the store cannot be read
     */
    List<RefRun> refCounts(BlockDevice device) throws IOException;
}
