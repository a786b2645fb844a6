package dev.iomap.testkit.snapfs;

import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.api.Xattrs;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.ProbedFormat;
import dev.iomap.testkit.snapfs.SnapState.Inode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * snapfs, the test kit's example of a small adapter, written against the SPI ({@code iomap-api})
 * only, as a third party would. All metadata lives in memory and is committed whole, as a
 * checksummed snapshot, to one of two alternating slots; data blocks are allocated when written.
 * Small enough to read in one sitting, yet honest about durability: remount and power-cut tests mean
 * something for it. It passes the whole contract kit on every standard geometry.
 *
 * <p>Format: a superblock in block 0, two metadata slots (each {@code min(4 MiB, device / 16)}),
 * then data; see {@code SnapLayout} and {@code SnapState}. A torn commit fails its checksum and the
 * other slot, one commit older, is used.
 *
 * <p>Thread-safety: an instance may be shared by any number of mounts of different devices; each mount
 * serialises its own calls. Apart from the test hook {@link #runOnceAfterNextWriteBegin}, an instance
 * is immutable.
 *
 * <p>Not registered by the test kit's jar: a test that finds it by name lists {@link SnapPlugin} in
 * its own (test-scope) {@code META-INF/services/dev.iomap.spi.AdapterPlugin}.
 */
public final class SnapAdapter implements FileSystemAdapter {
    /** The adapter's name, under which {@link SnapPlugin} registers it. */
    public static final String NAME = "snapfs";

    /**
     * Everything snapfs can do, and what {@link #SnapAdapter()} declares. No CLONE (so no
     * COPY_ON_WRITE): snapfs shares no blocks, and the kit proves clone and unshare are refused with
     * NotSupportedException.
     */
    public static final Set<Capability> SUPPORTED = Collections.unmodifiableSet(EnumSet.of(
            Capability.DIRECTORIES,
            Capability.FALLOCATE,
            Capability.UNWRITTEN_EXTENTS,
            Capability.PUNCH_HOLE,
            Capability.ZERO_RANGE,
            Capability.TRUNCATE,
            Capability.RANDOM_WRITE,
            Capability.DURABLE_FSYNC,
            Capability.RENAME_EXCHANGE,
            Capability.SYMLINKS,
            Capability.HARD_LINKS,
            Capability.POSIX_ATTRIBUTES,
            Capability.XATTRS));

    private final Set<Capability> capabilities;
    private final AtomicReference<Runnable> afterWriteBegin = new AtomicReference<>();

    /** snapfs declaring every capability it has: {@link #SUPPORTED}. */
    public SnapAdapter() {
        this(SUPPORTED);
    }

    /**
     * snapfs declaring only {@code capabilities}, to test what an engine or tool does with an adapter
     * that lacks some. The engine refuses an operation whose capability is not declared. The on-device
     * format does not depend on the declaration: any snapfs instance mounts any snapfs image.
     *
     * <p>Without {@link Capability#DURABLE_FSYNC}, fsync and fdatasync commit no metadata (the engine
     * has written the file's data back and flushes the device): metadata reaches the device only at
     * {@code sync} and unmount, so between those the device sees exactly the data written back, and
     * a power cut loses everything since the last sync or unmount.
     *
     * @param capabilities what to declare, a subset of {@link #SUPPORTED}
     * @throws IllegalArgumentException if {@code capabilities} holds one snapfs cannot honour
     *     (CLONE, COPY_ON_WRITE)
     */
    public SnapAdapter(Set<Capability> capabilities) {
        EnumSet<Capability> declared = EnumSet.noneOf(Capability.class);
        declared.addAll(capabilities);
        EnumSet<Capability> unsupported = EnumSet.copyOf(declared);
        unsupported.removeAll(SUPPORTED);
        if (!unsupported.isEmpty()) {
            throw new IllegalArgumentException("snapfs cannot honour " + unsupported + "; it supports " + SUPPORTED);
        }
        this.capabilities = Collections.unmodifiableSet(declared);
    }

    /**
     * snapfs declaring everything it supports but {@code absent}, e.g. {@code without(DURABLE_FSYNC)}
     * (see {@link #SnapAdapter(Set)} for what that changes).
     *
     * @param absent capabilities not to declare
     * @return a new adapter
     */
    public static SnapAdapter without(Capability... absent) {
        EnumSet<Capability> declared = EnumSet.copyOf(SUPPORTED);
        declared.removeAll(List.of(absent));
        return new SnapAdapter(declared);
    }

    /**
     * Test hook: {@code action} runs once, inside the next {@code begin} of a write on any mount of this
     * instance, after the mapping is computed and before the core uses it (to force the races a mapping
     * must survive). A later call replaces an action that has not run yet.
     *
     * @param action what to run; it may call back into the filesystem from the same thread
     */
    public void runOnceAfterNextWriteBegin(Runnable action) {
        afterWriteBegin.set(action);
    }

    /** @return {@value #NAME} */
    @Override
    public String name() {
        return NAME;
    }

    /** @return one line saying what snapfs models */
    @Override
    public String description() {
        return "metadata snapshots in two alternating slots (the test kit's example adapter)";
    }

    /** @return the capabilities given at construction ({@link #SUPPORTED} by default), unmodifiable */
    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    /**
     * Writes the superblock, an empty root directory as commit 1, and an empty slot 0; then flushes.
     *
     * @param device the device; its previous contents are lost
     * @param options the block size (at least the device's); snapfs takes no format properties
     * @throws IllegalArgumentException for a format property, a block size below the device's, or a
     *     device with fewer than 16 data blocks
     * @throws IOException if the device fails
     */
    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        checkFormat(device.blockSize(), device.capacity(), options);
        SnapLayout layout = SnapLayout.forDevice(device, options.blockSize());
        layout.writeSuperblock(device);
        layout.writeSlot(device, 1, SnapState.empty().serialize());
        layout.writeSlot(device, 0, new byte[0]);
        device.flush();
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException as {@link #format} does
     */
    @Override
    public void checkFormat(int deviceBlockSize, long capacity, FormatOptions options) {
        if (!options.properties().isEmpty()) {
            throw new IllegalArgumentException("snapfs has no format properties, got " + options.properties());
        }
        if (options.blockSize() < deviceBlockSize) {
            throw new IllegalArgumentException("block size " + options.blockSize() + " is below the device's "
                    + deviceBlockSize);
        }
        if (SnapLayout.forCapacity(capacity, options.blockSize()).dataBlocks() < 16) {
            throw new IllegalArgumentException("device of " + capacity + " bytes is too small for snapfs");
        }
    }

    /** @return whether device offset 0 carries the snapfs superblock magic */
    @Override
    public boolean probe(BlockDevice device) throws IOException {
        return SnapLayout.probe(device);
    }

    /** @return snapfs with the block size its superblock records, if device offset 0 carries the magic */
    @Override
    public Optional<ProbedFormat> probeFormat(BlockDevice device) throws IOException {
        OptionalInt blockSize = SnapLayout.probeBlockSize(device);
        return blockSize.isPresent() ? Optional.of(ProbedFormat.of(NAME, blockSize.getAsInt())) : Optional.empty();
    }

    /**
     * Loads the newest valid commit, verified as {@link #fsck} verifies it (so that a commit whose
     * checksum holds but whose content does not, as a forged one, is refused before anything is
     * written on top of it); writes nothing (the first write to the device is a data write or a
     * commit).
     *
     * @param device a snapfs image
     * @param options ignored: snapfs has no mount options
     * @return the mount, whose calls are serialised on itself
     * @throws CorruptFileSystemException if there is no snapfs superblock, no valid commit, or the
     *     commit breaks a rule {@link #fsck} checks (one line, the first problem)
     * @throws IOException if the device fails
     */
    @Override
    public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
        options.checkAdapterOptions(name(), java.util.Set.of());
        SnapLayout layout = SnapLayout.readSuperblock(device);
        SnapLayout.Slot slot = layout.readNewestSlot(device);
        if (slot == null || slot.sequence() == 0) {
            throw new CorruptFileSystemException("snapfs: no valid metadata slot");
        }
        SnapState state = SnapState.deserialize(slot.payload(), layout);
        List<String> problems = problems(layout, state, slot.sequence());
        if (!problems.isEmpty()) {
            throw new CorruptFileSystemException("snapfs: commit " + slot.sequence() + ": " + problems.getFirst()
                    + (problems.size() > 1 ? " (and " + (problems.size() - 1) + " more problems)" : "") + "; run fsck");
        }
        return new SnapMount(device, layout, state, slot.sequence(), afterWriteBegin,
                capabilities.contains(Capability.DURABLE_FSYNC), capabilities.contains(Capability.POSIX_ATTRIBUTES));
    }

    /**
     * Checks the newest valid commit: every block inside the data area and mapped once, every
     * directory entry a valid name ({@link FileNames#check}'s rules) of an existing inode, link counts
     * equal to the names, no entries in regular files and no blocks in directories, symbolic links with
     * a target of their size (no NUL), mode 0777 and nothing else, extended attribute names Linux
     * allows (no {@code user.} one on a symbolic link), every linked inode
     * reachable from the root, inode numbers below the next one to be handed out, and a sequence number
     * that cannot overflow.
     *
     * @param device a snapfs image, not mounted
     * @return the problems: only the superblock's if it is not a valid snapfs superblock, and
     *     "no valid metadata slot" if neither slot holds a valid commit
     * @throws IOException if the device fails
     */
    @Override
    public FsckReport fsck(BlockDevice device) throws IOException {
        SnapLayout layout;
        try {
            layout = SnapLayout.readSuperblock(device);
        } catch (CorruptFileSystemException e) {
            return new FsckReport(List.of(e.getMessage()), "the superblock only");
        }
        SnapLayout.Slot slot = layout.readNewestSlot(device);
        if (slot == null) {
            return new FsckReport(List.of("no valid metadata slot"), "superblock");
        }
        SnapState state;
        try {
            state = SnapState.deserialize(slot.payload(), layout);
        } catch (CorruptFileSystemException e) {
            return new FsckReport(List.of(e.getMessage()), "superblock, commit " + slot.sequence());
        }
        long blocks = state.inodes.values().stream().mapToLong(inode -> inode.blocks.size()).sum();
        return new FsckReport(problems(layout, state, slot.sequence()), state.inodes.size() + " inodes, " + blocks
                + " blocks, commit " + slot.sequence());
    }

    /** The rules a commit must keep, checked by fsck and by mount. */
    private static List<String> problems(SnapLayout layout, SnapState state, long sequence) {
        List<String> problems = new ArrayList<>();
        if (sequence > SnapLayout.MAX_SEQUENCE) {
            problems.add("commit sequence " + sequence + " is past " + SnapLayout.MAX_SEQUENCE);
        }
        Inode root = state.inodes.get(SnapState.ROOT);
        if (root == null || root.type != FileType.DIRECTORY) {
            problems.add("the root directory (inode " + SnapState.ROOT + ") is missing");
        }
        BitSet owners = new BitSet();
        Map<Long, Integer> names = new HashMap<>();
        for (Inode inode : state.inodes.values()) {
            if (inode.ino < 1 || inode.ino >= state.nextIno) {
                problems.add("inode " + inode.ino + " is not below the next inode number " + state.nextIno);
            }
            if (inode.size < 0 || inode.size > SnapMount.MAX_FILE_SIZE) {
                problems.add("inode " + inode.ino + " has size " + inode.size);
            }
            for (Map.Entry<Long, Long> entry : inode.blocks.entrySet()) {
                long deviceBlock = SnapState.deviceBlock(entry.getValue());
                if (deviceBlock < layout.firstDataBlock() || deviceBlock >= layout.totalBlocks()) {
                    problems.add("inode " + inode.ino + " block " + entry.getKey() + " maps outside the data area: "
                            + deviceBlock);
                } else if (owners.get((int) deviceBlock)) {
                    problems.add("device block " + deviceBlock + " is used twice (inode " + inode.ino + ")");
                } else {
                    owners.set((int) deviceBlock);
                }
            }
            for (Map.Entry<String, Long> entry : inode.entries.entrySet()) {
                long child = entry.getValue();
                names.merge(child, 1, Integer::sum);
                if (!state.inodes.containsKey(child)) {
                    problems.add("directory " + inode.ino + " names missing inode " + child);
                }
                if (!validName(entry.getKey())) {
                    problems.add("directory " + inode.ino + " has an invalid name for inode " + child);
                }
            }
            if (inode.type == FileType.REGULAR && !inode.entries.isEmpty()) {
                problems.add("regular file " + inode.ino + " has directory entries");
            }
            if (inode.type == FileType.DIRECTORY && !inode.blocks.isEmpty()) {
                problems.add("directory " + inode.ino + " maps data blocks");
            }
            symlinkProblems(inode, problems);
            xattrProblems(inode, problems);
        }
        for (Inode inode : state.inodes.values()) {
            int found = names.getOrDefault(inode.ino, 0);
            int expected = inode.ino == SnapState.ROOT ? 0 : inode.links;
            if (found != expected) {
                problems.add("inode " + inode.ino + " has link count " + inode.links + " but " + found + " names");
            }
        }
        unreachable(state).forEach(ino -> problems.add("inode " + ino + " is linked but not reachable from the root"));
        return problems;
    }

    /** A symbolic link has a target of its size and nothing else; nothing else has a target. */
    private static void symlinkProblems(Inode inode, List<String> problems) {
        if (inode.type != FileType.SYMLINK) {
            if (inode.target != null) {
                problems.add("inode " + inode.ino + " is a " + inode.type + " with a symbolic link target");
            }
            return;
        }
        if (inode.target == null || inode.target.length != inode.size) {
            problems.add("symbolic link " + inode.ino + " has size " + inode.size + " but a target of "
                    + (inode.target == null ? "none" : inode.target.length + " bytes"));
        } else if (indexOfNul(inode.target) >= 0) {
            problems.add("symbolic link " + inode.ino + " has a NUL in its target");
        }
        if (!inode.entries.isEmpty() || !inode.blocks.isEmpty()) {
            problems.add("symbolic link " + inode.ino + " has directory entries or data blocks");
        }
        if (inode.mode != 0777) {
            problems.add("symbolic link " + inode.ino + " has mode 0" + Integer.toOctalString(inode.mode));
        }
    }

    /** Extended attribute names follow {@link Xattrs#checkName}; no {@code user.} one is on a symbolic link. */
    private static void xattrProblems(Inode inode, List<String> problems) {
        for (String name : inode.xattrs.keySet()) {
            try {
                Xattrs.checkName(name);
            } catch (IOException | IllegalArgumentException e) {
                problems.add("inode " + inode.ino + " has an invalid extended attribute name: " + e.getMessage());
                continue;
            }
            if (inode.type == FileType.SYMLINK && Xattrs.isUser(name)) {
                problems.add("symbolic link " + inode.ino + " has a user. extended attribute");
            }
        }
    }

    private static int indexOfNul(byte[] bytes) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        return -1;
    }

    private static boolean validName(String name) {
        return FileNames.isValid(name);
    }

    /** @return the inodes with links that no path from the root reaches */
    private static List<Long> unreachable(SnapState state) {
        Set<Long> reached = new java.util.HashSet<>();
        java.util.ArrayDeque<Long> queue = new java.util.ArrayDeque<>(List.of(SnapState.ROOT));
        while (!queue.isEmpty()) {
            Inode inode = state.inodes.get(queue.poll());
            if (inode != null && reached.add(inode.ino)) {
                queue.addAll(inode.entries.values());
            }
        }
        return state.inodes.values().stream().filter(inode -> inode.links > 0 && !reached.contains(inode.ino))
                .map(inode -> inode.ino).toList();
    }
}
