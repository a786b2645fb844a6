package dev.iomap.nio.testadapter;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.spi.FilesystemAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.device.IoPurpose;
import dev.iomap.api.MountOptions;
import dev.iomap.spi.MountedFilesystem;
import dev.iomap.api.NoSpaceException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * A small adapter with a real on-device format, for the tests of the integration modules (NIO
 * provider, FUSE bridge) until the model adapters are ready.
 *
 * <p>Format: block 0 holds a superblock (magic, geometry, a clean flag and the length and CRC32C of
 * the metadata); blocks {@code 1 .. metaBlocks-1} hold the whole namespace and block map, rewritten
 * at sync, at an fsync that changed something, and at unmount ({@link ImageMetadata}); data blocks
 * follow. Mount clears the clean flag on the device and unmount sets it, so {@link #fsck} reports an
 * image that was not unmounted. Not crash-safe, and not meant to be.
 */
public final class ImageTestAdapter implements FilesystemAdapter {
    /** The adapter's name. */
    public static final String NAME = "image-test";

    static final long MAGIC = 0x494f4d4150494d47L;
    static final int SUPERBLOCK_BYTES = 48;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "namespace and block map rewritten to a metadata area (tests of the NIO and FUSE modules)";
    }

    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(Capability.DIRECTORIES, Capability.FALLOCATE, Capability.PUNCH_HOLE,
                Capability.ZERO_RANGE, Capability.TRUNCATE, Capability.RANDOM_WRITE);
    }

    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        int blockSize = options.blockSize();
        if (blockSize < device.blockSize()) {
            throw new IllegalArgumentException("block size " + blockSize + " is smaller than the device's "
                    + device.blockSize());
        }
        long totalBlocks = device.capacity() / blockSize;
        long metaBlocks = Math.max(16, totalBlocks / 32);
        if (totalBlocks < metaBlocks + 16) {
            throw new NoSpaceException(NAME + ": device of " + device.capacity() + " bytes is too small");
        }
        var geometry = new Geometry(blockSize, totalBlocks, metaBlocks);
        write(device, geometry, new ImageMetadata(), true);
    }

    @Override
    public MountedFilesystem mount(BlockDevice device, MountOptions options) throws IOException {
        Image image = read(device);
        write(device, image.geometry(), image.metadata(), false);
        return new ImageMount(device, image.geometry(), image.metadata());
    }

    @Override
    public FsckReport fsck(BlockDevice device) throws IOException {
        Image image;
        try {
            image = read(device);
        } catch (CorruptFilesystemException e) {
            return new FsckReport(List.of(e.getMessage()), "superblock");
        }
        List<String> problems = new ArrayList<>();
        if (!image.clean()) {
            problems.add("superblock: clean flag off (the image was not unmounted)");
        }
        image.metadata().check(image.geometry(), problems);
        return new FsckReport(problems, image.metadata().nodes.size() + " inodes, "
                + image.metadata().usedBlocks(image.geometry()).cardinality() + " data blocks");
    }

    /** Block size, blocks on the device, and blocks before the first data block. */
    record Geometry(int blockSize, long totalBlocks, long metaBlocks) {
        long metadataCapacity() {
            return metaBlocks * blockSize - blockSize;
        }
    }

    private record Image(Geometry geometry, ImageMetadata metadata, boolean clean) {
    }

    /** Writes metadata then the superblock, and flushes. */
    static void write(BlockDevice device, Geometry geometry, ImageMetadata metadata, boolean clean)
            throws IOException {
        byte[] bytes = metadata.encode();
        if (bytes.length > geometry.metadataCapacity()) {
            throw new NoSpaceException(NAME + ": metadata of " + bytes.length + " bytes exceeds its area of "
                    + geometry.metadataCapacity());
        }
        int blockSize = geometry.blockSize();
        int padded = (bytes.length + blockSize - 1) / blockSize * blockSize;
        if (padded > 0) {
            ByteBuffer area = ByteBuffer.allocate(padded).put(bytes).clear();
            device.write(blockSize, area, IoPurpose.METADATA).join();
        }
        var crc = new CRC32C();
        crc.update(bytes);
        ByteBuffer superblock = ByteBuffer.allocate(blockSize)
                .putLong(MAGIC)
                .putInt(blockSize)
                .putLong(geometry.totalBlocks())
                .putLong(geometry.metaBlocks())
                .putInt(clean ? 1 : 0)
                .putLong(bytes.length)
                .putInt((int) crc.getValue());
        superblock.clear();
        device.write(0, superblock, IoPurpose.METADATA).join();
        device.flush();
    }

    private static Image read(BlockDevice device) throws IOException {
        int sectors = Math.max(device.blockSize(), 512);
        ByteBuffer header = ByteBuffer.allocate(sectors);
        device.read(0, header);
        header.flip();
        if (header.getLong() != MAGIC) {
            throw new CorruptFilesystemException(NAME + ": bad magic at device offset 0");
        }
        var geometry = new Geometry(header.getInt(), header.getLong(), header.getLong());
        boolean clean = header.getInt() == 1;
        long length = header.getLong();
        int expectedCrc = header.getInt();
        if (length < 0 || length > geometry.metadataCapacity()) {
            throw new CorruptFilesystemException(NAME + ": metadata length " + length + " out of range");
        }
        int blockSize = geometry.blockSize();
        int padded = (int) ((length + blockSize - 1) / blockSize * blockSize);
        ByteBuffer area = ByteBuffer.allocate(padded);
        if (padded > 0) {
            device.read(blockSize, area);
        }
        byte[] bytes = new byte[(int) length];
        area.flip().get(bytes);
        var crc = new CRC32C();
        crc.update(bytes);
        if ((int) crc.getValue() != expectedCrc) {
            throw new CorruptFilesystemException(NAME + ": metadata checksum mismatch at device offset "
                    + blockSize);
        }
        return new Image(geometry, ImageMetadata.decode(bytes), clean);
    }

    /** Counts references to each data block, for fsck. */
    static Map<Long, Integer> references(ImageMetadata metadata) {
        Map<Long, Integer> refs = new HashMap<>();
        for (ImageMetadata.Node node : metadata.nodes.values()) {
            for (long device : node.blocks.values()) {
                refs.merge(device, 1, Integer::sum);
            }
        }
        return refs;
    }

    static BitSet bits(Map<Long, Integer> refs) {
        BitSet used = new BitSet();
        refs.keySet().forEach(block -> used.set(Math.toIntExact(block)));
        return used;
    }
}
