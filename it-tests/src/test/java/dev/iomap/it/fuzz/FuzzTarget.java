package dev.iomap.it.fuzz;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.device.BlockDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.util.List;

/**
 * One adapter on one geometry, as the fuzzer sees it: how to make, populate and open its image,
 * where its metadata structures are (from the adapter's README), and the write workload run on its
 * mutants.
 */
abstract class FuzzTarget {

    /** Whether an image says it was cleanly unmounted. */
    enum CleanFlag {
        CLEAN,
        NOT_CLEAN,
        /** The format has no such flag. */
        NONE
    }

    private final String adapter;
    private final String label;
    private final int blockSize;
    private final Geometry mountGeometry;

    /**
     * @param adapter the adapter's name
     * @param label the geometry's short name
     * @param blockSize the bytes of what a "block" of the image is (the filesystem block)
     * @param mountGeometry the page-cache geometry of every mount
     */
    FuzzTarget(String adapter, String label, int blockSize, Geometry mountGeometry) {
        this.adapter = adapter;
        this.label = label;
        this.blockSize = blockSize;
        this.mountGeometry = mountGeometry;
    }

    /** @return the adapter's name */
    final String adapter() {
        return adapter;
    }

    /** @return the geometry's short name */
    final String label() {
        return label;
    }

    /** @return the bytes of what a "block" of the image is (the filesystem block) */
    final int blockSize() {
        return blockSize;
    }

    /** @return the page-cache geometry of every mount */
    final Geometry mountGeometry() {
        return mountGeometry;
    }

    /** @return a blank device holding the image */
    abstract RamBlockDevice newImage();

    /** @return what format is called on (a zoned device over the image, or the image itself) */
    BlockDevice formatting(RamBlockDevice image) throws IOException {
        return image;
    }

    /** @return what mount and fsck are called on */
    BlockDevice opening(RamBlockDevice image) throws IOException {
        return image;
    }

    /** Releases what {@link #formatting} or {@link #opening} made, after unmount. */
    void release(BlockDevice device) throws IOException {
    }

    abstract FormatOptions formatOptions();

    /**
     * @return whether the pristine image is taken while mounted, after {@link #populate} synced: a
     *     crash image, whose journal replay the mutants then exercise
     */
    boolean crashImage() {
        return false;
    }

    /**
     * @return for a crash image, the blocks of the journal's last transaction (its descriptors, logged
     *     images and commit), empty otherwise
     */
    java.util.Set<Long> lastTransactionBlocks(RamBlockDevice image, ImageMap map) throws IOException {
        return java.util.Set.of();
    }

    /** Makes the files and directories of the pristine image. */
    abstract void populate(IomapFileSystem fs) throws IOException;

    /** @return the workload run on every mutant that mounts */
    abstract Workload workload(FileTree original);

    /** @return the metadata structures of a pristine image */
    abstract List<Structure> structures(RamBlockDevice image) throws IOException;

    /**
     * @param block an image block
     * @return the file blocks the format itself places there (zonefs-like: the zones' files), empty
     *     where only the content can tell (the default)
     */
    List<ImageMap.Owner> layoutOwners(long block) {
        return List.of();
    }

    /**
     * @param image the pristine image
     * @param tree its files, with the inode numbers their entries give
     * @return the file blocks each image block holds, as the format's own mapping of data says (an
     *     adapter whose data cannot be recognised by content: compressed, or zeroes it allocated), empty
     *     where content is enough (the default); a block listed here is not looked up by content
     * @throws IOException if the image cannot be read
     */
    java.util.Map<Long, List<ImageMap.Owner>> extentOwners(RamBlockDevice image, FileTree tree) throws IOException {
        return java.util.Map.of();
    }

    /**
     * @return whether the adapter checksums file data, so that a damaged data block fails the read of
     *     the file owning it (a one-line typed error) instead of changing its bytes
     */
    boolean checksumsData() {
        return false;
    }

    /**
     * @return whether the adapter's mount runs fsck's checks, so that a mutant fsck flags must be refused
     *     at mount (not only read back intact)
     */
    boolean mountRefusesWhatFsckFlags() {
        return false;
    }

    /** @return whether the image says it was cleanly unmounted */
    CleanFlag cleanFlag(RamBlockDevice image) throws IOException {
        return CleanFlag.NONE;
    }

    @Override
    public String toString() {
        return adapter() + "/" + label();
    }

    /** Creates {@code path} holding {@code length} bytes of its own pattern (seeded by its name). */
    static void file(IomapFileSystem fs, String path, int length) throws IOException {
        try (IomapFile file = fs.create(path)) {
            file.write(0, TestData.buffer(seedOf(path), 0, length));
        }
    }

    /** @return the pattern seed of a file's original content */
    static long seedOf(String path) {
        return path.hashCode() * 0x9E3779B97F4A7C15L;
    }
}
