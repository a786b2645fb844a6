package dev.iomap.adapter.support.skeleton;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.adapter.support.BlockSizeView;
import dev.iomap.adapter.support.Journal;
import dev.iomap.adapter.support.SuperblockCodec;
import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.MountedFileSystem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * A complete filesystem adapter around a {@link BlockMapModel}: superblock, journal, bitmap, inode table,
 * namespace, allocate-at-write mappings, fsck. An adapter is a {@link SkeletonConfig} and a model:
 * {@code new SkeletonAdapter(SkeletonConfig.of("my-fs", "...", "MYFS0001", false), new MyModel())}.
 *
 * <p>Format, in filesystem blocks (the device is seen through {@link BlockSizeView}): block 0 the
 * superblock ({@link SuperblockCodec}, the layout in its payload), then the journal ({@link Journal}),
 * the bitmap, the inode table, and the data area. All metadata changes go through the journal; file data
 * is written in place, flushed before each commit.
 *
 * <p>Immutable and thread-safe, as the SPI requires: one instance serves every mount.
 */
public class SkeletonAdapter implements FileSystemAdapter {
    private final SkeletonConfig config;
    private final BlockMapModel model;
    private final SuperblockCodec codec;

    /**
     * @param config name, magic, namespace shape, inode ratio
     * @param model how files find, allocate and free their blocks
     */
    public SkeletonAdapter(SkeletonConfig config, BlockMapModel model) {
        this.config = config;
        this.model = model;
        this.codec = new SuperblockCodec(config.name(), config.magic(), 1);
    }

    /** @return the configured name */
    @Override
    public String name() {
        return config.name();
    }

    /** @return the configured description */
    @Override
    public String description() {
        return config.description();
    }

    /** @return {@link SkeletonConfig#capabilities()} */
    @Override
    public Set<Capability> capabilities() {
        return config.capabilities();
    }

    /** @return the model this adapter was built with */
    public BlockMapModel model() {
        return model;
    }

    /**
     * Writes the superblock, an empty journal, the bitmap (the metadata regions in use), the inode table
     * (an empty root directory, inode 1) and flushes.
     *
     * @throws IllegalArgumentException for format properties, a block size the device or the model cannot
     *     take, or a device with fewer than 16 data blocks
     */
    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        checkFormat(device.blockSize(), device.capacity(), options);
        BlockDevice view = BlockSizeView.of(device, options.blockSize());
        Layout layout = Layout.compute(view.capacity(), options.blockSize(), model.inodeSlots(), config.bytesPerInode());
        ByteBuffer zeroes = ByteBuffer.allocate(options.blockSize());
        for (long b = layout.bitmapStart(); b < layout.firstDataBlock(); b++) {
            BlockIo.write(view, b, List.of(zeroes.duplicate()), IoPurpose.METADATA);
        }
        Journal.format(view, layout.journalStart(), layout.journalBlocks());
        BitSet used = new BitSet();
        used.set(0, (int) layout.firstDataBlock());
        for (long i = 0; i < layout.bitmapBlocks(); i++) {
            BlockIo.write(view, layout.bitmapStart() + i, List.of(Space.encodeBitmapBlock(layout, used, i)),
                    IoPurpose.METADATA);
        }
        TreeMap<Long, SkeletonInode> root = new TreeMap<>();
        SkeletonInode dir = new SkeletonInode(Layout.ROOT, FileType.DIRECTORY, model.inodeSlots());
        dir.setLinks(1);
        dir.touch(System.currentTimeMillis());
        root.put(Layout.ROOT, dir);
        BlockIo.write(view, layout.inodeStart(), List.of(InodeTable.encodeBlock(layout, 0, root)), IoPurpose.METADATA);
        codec.write(view, 0, layout.encode());
        view.flush();
    }

    /** @throws IllegalArgumentException as {@link #format} does */
    @Override
    public void checkFormat(int deviceBlockSize, long capacity, FormatOptions options) {
        if (!options.properties().isEmpty()) {
            throw new IllegalArgumentException(name() + " has no format properties, got " + options.properties());
        }
        int blockSize = options.blockSize();
        if (Integer.bitCount(blockSize) != 1 || blockSize < Math.max(deviceBlockSize, 512)) {
            throw new IllegalArgumentException("block size " + blockSize + " is not a power of two of at least "
                    + Math.max(deviceBlockSize, 512));
        }
        if (Layout.compute(capacity, blockSize, model.inodeSlots(), config.bytesPerInode()).dataBlocks() < 16) {
            throw new IllegalArgumentException("device of " + capacity + " bytes is too small for " + name());
        }
    }

    /** @return whether block 0 carries this adapter's superblock magic */
    @Override
    public boolean probe(BlockDevice device) throws IOException {
        return codec.probe(device, 0);
    }

    /**
     * Replays the journal, loads bitmap, inodes and directories, then frees what a power cut left behind
     * (inodes without a name, blocks past a file's size), committing if that changed anything.
     *
     * @throws CorruptFileSystemException if the superblock, layout, inode table or a directory is damaged
     */
    @Override
    public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
        options.checkAdapterOptions(name(), Set.of());
        Layout layout = readLayout(device);
        BlockDevice view = BlockSizeView.of(device, layout.blockSize());
        Journal journal = Journal.open(view, layout.journalStart(), layout.journalBlocks());
        journal.replay();
        Space space = new Space(layout, view, journal, Space.readBitmap(view, layout));
        TreeMap<Long, SkeletonInode> inodes = readInodes(view, layout);
        SkeletonInode root = inodes.get(Layout.ROOT);
        if (root == null || root.type() != FileType.DIRECTORY) {
            throw new CorruptFileSystemException(name() + ": the root directory (inode 1) is missing");
        }
        Directories dirs = new Directories(model, layout.blockSize(), inodes);
        for (SkeletonInode inode : inodes.values()) {
            if (inode.type() == FileType.DIRECTORY) {
                dirs.put(inode.ino(), Directories.load(model, space, inode));
            }
        }
        SkeletonMount mount = createMount(new SkeletonMount.Parts(layout, view, journal, space, model, config.tree(),
                inodes, dirs));
        mount.recover();
        return mount;
    }

    /**
     * Makes the mount object; a test overrides it to plant a bug in a {@link SkeletonMount} subclass.
     *
     * @param parts what {@link #mount} loaded
     * @return the mount
     */
    protected SkeletonMount createMount(SkeletonMount.Parts parts) {
        return new SkeletonMount(parts);
    }

    Layout readLayout(BlockDevice device) throws IOException {
        return Layout.decode(codec.read(device, 0).payload(), device.capacity(), model.inodeSlots());
    }

    static TreeMap<Long, SkeletonInode> readInodes(BlockDevice view, Layout layout) throws IOException {
        TreeMap<Long, SkeletonInode> inodes = new TreeMap<>();
        for (long i = 0; i < layout.inodeBlocks(); i += 256) {
            int n = (int) Math.min(256, layout.inodeBlocks() - i);
            ByteBuffer blocks = BlockIo.read(view, layout.inodeStart() + i, n);
            for (int k = 0; k < n; k++) {
                ByteBuffer block = blocks.duplicate().position(k * layout.blockSize())
                        .limit((k + 1) * layout.blockSize()).slice();
                InodeTable.decodeBlock(layout, i + k, block, inodes);
            }
        }
        return inodes;
    }

    /** As {@link SkeletonFsck#check}: the image as the journal would leave it, changing nothing. */
    @Override
    public FsckReport fsck(BlockDevice device) throws IOException {
        Layout layout;
        try {
            layout = readLayout(device);
        } catch (CorruptFileSystemException e) {
            return new FsckReport(List.of(e.getMessage()), "the superblock only");
        }
        return new SkeletonFsck(layout, BlockSizeView.of(device, layout.blockSize()), model).check();
    }
}
