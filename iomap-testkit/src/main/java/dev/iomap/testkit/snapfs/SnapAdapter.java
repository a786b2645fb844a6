package dev.iomap.testkit.snapfs;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.FileType;
import dev.iomap.spi.FilesystemAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.spi.MountedFilesystem;
import dev.iomap.testkit.snapfs.SnapState.Inode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * snapfs: a small adapter for the kit's own integration tests, written against {@code iomap-api}
 * only, as a third party would. All metadata lives in memory and is committed whole, as a
 * checksummed snapshot, to one of two alternating slots; data blocks are allocated when written.
 * Small enough to read in one sitting, yet honest about durability: remount and power-cut tests mean
 * something for it.
 */
public final class SnapAdapter implements FilesystemAdapter {
    /** The adapter's name. */
    public static final String NAME = "snapfs";

    /**
     * What snapfs can do, in one place. No CLONE (so no COPY_ON_WRITE): it shares no blocks, and the
     * kit proves clone and unshare are refused with NotSupportedException.
     */
    private static final Set<Capability> CAPABILITIES = EnumSet.of(
            Capability.DIRECTORIES,
            Capability.FALLOCATE,
            Capability.PUNCH_HOLE,
            Capability.ZERO_RANGE,
            Capability.TRUNCATE,
            Capability.RANDOM_WRITE,
            Capability.DURABLE_FSYNC);

    private final java.util.concurrent.atomic.AtomicReference<Runnable> afterWriteBegin =
            new java.util.concurrent.atomic.AtomicReference<>();

    /**
     * Test hook: {@code action} runs once, inside the next {@code begin} of a write, after the mapping
     * is computed and before the core uses it (to force the races a mapping must survive).
     *
     * @param action what to run; it may call back into the filesystem from the same thread
     */
    public void runOnceAfterNextWriteBegin(Runnable action) {
        afterWriteBegin.set(action);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "metadata snapshots in two alternating slots (the test kit's example adapter)";
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        if (!options.properties().isEmpty()) {
            throw new IllegalArgumentException("snapfs has no format properties, got " + options.properties());
        }
        if (options.blockSize() < device.blockSize()) {
            throw new IllegalArgumentException("block size " + options.blockSize() + " is below the device's "
                    + device.blockSize());
        }
        SnapLayout layout = SnapLayout.forDevice(device, options.blockSize());
        if (layout.dataBlocks() < 16) {
            throw new IllegalArgumentException("device of " + device.capacity() + " bytes is too small for snapfs");
        }
        layout.writeSuperblock(device);
        layout.writeSlot(device, 1, SnapState.empty().serialize());
        layout.writeSlot(device, 0, new byte[0]);
        device.flush();
    }

    @Override
    public MountedFilesystem mount(BlockDevice device, MountOptions options) throws IOException {
        SnapLayout layout = SnapLayout.readSuperblock(device);
        SnapLayout.Slot slot = layout.readNewestSlot(device);
        if (slot == null || slot.sequence() == 0) {
            throw new CorruptFilesystemException("snapfs: no valid metadata slot");
        }
        return new SnapMount(device, layout, SnapState.deserialize(slot.payload()), slot.sequence(), afterWriteBegin);
    }

    @Override
    public FsckReport fsck(BlockDevice device) throws IOException {
        SnapLayout layout = SnapLayout.readSuperblock(device);
        SnapLayout.Slot slot = layout.readNewestSlot(device);
        if (slot == null) {
            return new FsckReport(List.of("no valid metadata slot"), "superblock");
        }
        SnapState state = SnapState.deserialize(slot.payload());
        List<String> problems = new ArrayList<>();
        BitSet owners = new BitSet();
        Map<Long, Integer> names = new HashMap<>();
        long blocks = 0;
        for (Inode inode : state.inodes.values()) {
            for (Map.Entry<Long, Long> entry : inode.blocks.entrySet()) {
                long device_ = SnapState.deviceBlock(entry.getValue());
                blocks++;
                if (device_ < layout.firstDataBlock() || device_ >= layout.totalBlocks()) {
                    problems.add("inode " + inode.ino + " block " + entry.getKey() + " maps outside the data area: "
                            + device_);
                } else if (owners.get((int) device_)) {
                    problems.add("device block " + device_ + " is used twice (inode " + inode.ino + ")");
                }
                owners.set((int) device_);
            }
            for (long child : inode.entries.values()) {
                names.merge(child, 1, Integer::sum);
                if (!state.inodes.containsKey(child)) {
                    problems.add("directory " + inode.ino + " names missing inode " + child);
                }
            }
            if (inode.type == FileType.REGULAR && !inode.entries.isEmpty()) {
                problems.add("regular file " + inode.ino + " has directory entries");
            }
        }
        for (Inode inode : state.inodes.values()) {
            int found = names.getOrDefault(inode.ino, 0);
            int expected = inode.ino == SnapState.ROOT ? 0 : inode.links;
            if (found != expected) {
                problems.add("inode " + inode.ino + " has link count " + inode.links + " but " + found + " names");
            }
        }
        return new FsckReport(problems, state.inodes.size() + " inodes, " + blocks + " blocks, commit "
                + slot.sequence());
    }
}
