package dev.iomap.adapter.zonefs;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.MountOptions;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.ProbedFormat;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.Zone;
import dev.iomap.device.ZoneCondition;
import dev.iomap.device.ZonedBlockDevice;
import java.io.IOException;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The zonefs model: one file per zone of a {@link ZonedBlockDevice}, no metadata but a superblock.
 * See the module README for the zone model and what each kind of file accepts.
 *
 * <p>Immutable and thread-safe; one instance serves every mount.
 */
public final class ZonefsLikeAdapter implements FileSystemAdapter {
    /** The adapter's name. */
    public static final String NAME = "zonefs-like";
    private static final System.Logger LOG = System.getLogger(ZonefsLikeAdapter.class.getName());

    /**
     * What the filesystem can do, declared in one place. The core applies a capability to the whole
     * filesystem, while zonefs' rules differ by zone type, so a capability is declared when one kind
     * of file has it and the other kind refuses the operation itself, with a typed error and before
     * anything changes:
     * <ul>
     *   <li>{@link Capability#RANDOM_WRITE}: conventional zone files are overwritten anywhere; a
     *       sequential zone file refuses a write not at its end ({@link SequentialFileException}).</li>
     *   <li>{@link Capability#TRUNCATE}: a sequential zone file truncates to 0 (zone reset) or to its
     *       capacity (zone finish); anything else, and any truncate of a conventional zone file to
     *       another size than its own, is refused ({@link dev.iomap.spi.FileOps#checkSetSize}).</li>
     *   <li>{@link Capability#DURABLE_FSYNC}: fsync writes back and flushes the device, which makes
     *       the data and the zone write pointers (the sequential files' sizes) durable.</li>
     *   <li>{@link Capability#DIRECT_IO}: a conventional file takes aligned direct reads and writes
     *       in place; a sequential file takes direct appends at its write pointer (the size), as in
     *       the kernel, alongside buffered appends (buffered data before it is written back first);
     *       a direct write that is not an append is refused as a buffered one is (EINVAL).</li>
     * </ul>
     * Not declared: {@code DIRECTORIES} (the namespace is fixed), {@code FALLOCATE},
     * {@code PUNCH_HOLE}, {@code ZERO_RANGE} (zones have no unallocated blocks and sequential data
     * cannot be rewritten), {@code COPY_ON_WRITE} and {@code CLONE} (a block belongs to one zone).
     */
    private static final Set<Capability> CAPABILITIES =
            Set.copyOf(EnumSet.of(Capability.RANDOM_WRITE, Capability.TRUNCATE, Capability.DURABLE_FSYNC,
                    Capability.DIRECT_IO));

    /** Creates the adapter (it holds no state); {@link ZonefsLikePlugin} declares one. */
    public ZonefsLikeAdapter() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "zonefs: one file per zone of a zoned device, sequential zone files append-only at the write pointer";
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    /** @return true: every file is a zone, so the device must be a {@link ZonedBlockDevice} */
    @Override
    public boolean requiresZonedDevice() {
        return true;
    }

    /**
     * Resets every sequential zone (one reset of them all: the device records them empty, it writes
     * nothing over them), discards every conventional zone (so conventional files start as zeroes) and
     * writes the superblock at the start of zone 0, which is then finished if sequential. Every check
     * runs before the device is touched.
     *
     * @throws NotSupportedException if the device is not zoned
     * @throws InvalidRangeException if the block size does not fit the device or its zones, there is
     *     no zone besides zone 0, or a property is given (there are none)
     */
    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        ZonedBlockDevice zoned = zoned(device);
        List<Zone> zones = zoned.zones();
        checkFormat(zoned.blockSize(), zones, options);
        zoned.resetAllZones();
        int conventional = 0;
        for (Zone zone : zones) {
            if (!zone.isSequential()) {
                zoned.discard(zone.start(), zone.capacity());
                conventional++;
            }
        }
        int files = zones.size() - 1;
        int conventionalFiles = zones.getFirst().isSequential() ? conventional : conventional - 1;
        new ZonefsSuperblock(options.blockSize(), zones.size(), zoned.zoneSize(), conventionalFiles,
                files - conventionalFiles, ZonefsSuperblock.digest(zones), System.currentTimeMillis(), options.label())
                .write(zoned);
        if (zones.getFirst().isSequential()) {
            zoned.finishZone(0);
        }
        zoned.flush();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Checks the properties (there are none); the zones are checked by
     * {@link #checkFormat(int, List, FormatOptions)}.
     */
    @Override
    public void checkFormat(int deviceBlockSize, long capacity, FormatOptions options) throws IOException {
        if (!options.properties().isEmpty()) {
            throw new InvalidRangeException(NAME + " takes no format properties; got " + options.properties().keySet());
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Everything {@link #format} checks: no properties, a block size no smaller than the device's, at
     * least two zones (the superblock's and one file's), every zone a whole number of blocks.
     */
    @Override
    public void checkFormat(int deviceBlockSize, List<Zone> zones, FormatOptions options) throws IOException {
        checkFormat(deviceBlockSize, zones.isEmpty() ? 0 : zones.getLast().end(), options);
        checkGeometry(deviceBlockSize, zones, options.blockSize());
    }

    /** @return whether the device is zoned and zone 0 starts with the zonefs-like superblock magic */
    @Override
    public boolean probe(BlockDevice device) throws IOException {
        return device instanceof ZonedBlockDevice && ZonefsSuperblock.CODEC.probe(device, 0);
    }

    /**
     * @return zonefs-like with the block size in the superblock payload's first field, if the device
     *     is zoned and zone 0 starts with the magic
     */
    @Override
    public Optional<ProbedFormat> probeFormat(BlockDevice device) throws IOException {
        if (!(device instanceof ZonedBlockDevice)) {
            return Optional.empty();
        }
        return ZonefsSuperblock.CODEC.probePayload(device, 0).map(payload -> ProbedFormat.of(NAME, payload.getInt(0)));
    }

    private static void checkGeometry(int deviceBlockSize, List<Zone> zones, int blockSize)
            throws InvalidRangeException {
        if (blockSize < deviceBlockSize) {
            throw new InvalidRangeException(NAME + ": block size " + blockSize + " is smaller than the device's "
                    + deviceBlockSize);
        }
        if (zones.size() < 2) {
            throw new InvalidRangeException(NAME + " needs at least two zones (the superblock's and one file's);"
                    + " the device has " + zones.size());
        }
        for (Zone zone : zones) {
            if (zone.start() % blockSize != 0 || zone.capacity() % blockSize != 0) {
                throw new InvalidRangeException(NAME + ": zone at " + zone.start() + " of capacity "
                        + zone.capacity() + " is not a whole number of " + blockSize + "-byte blocks");
            }
            if (zone.condition() == ZoneCondition.READ_ONLY || zone.condition() == ZoneCondition.OFFLINE) {
                throw new InvalidRangeException(NAME + ": zone at " + zone.start() + " is " + zone.condition()
                        + ": every zone must be writable to format");
            }
        }
    }

    /**
     * Reads the superblock, checks the zones are still those mkfs saw, and builds one file per zone.
     * Each problem the device recovered from in its own state ({@link ZonedBlockDevice#stateProblems},
     * e.g. a damaged copy of the zone state) is logged as a warning: the mount goes on, the write
     * pointers being exact, but the damage says the medium needs a look.
     *
     * @throws NotSupportedException if the device is not zoned, or if the page cache would rewrite
     *     clean blocks of a folio at writeback (per-block dirty tracking off with folios larger than a
     *     block): a sequential zone cannot take a rewrite
     */
    @Override
    public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
        options.checkAdapterOptions(NAME, Set.of());
        ZonedBlockDevice zoned = zoned(device);
        ZonefsSuperblock superblock = ZonefsSuperblock.read(zoned);
        List<Zone> zones = zoned.zones();
        checkLayout(superblock, zones);
        for (String problem : zoned.stateProblems()) {
            LOG.log(System.Logger.Level.WARNING, NAME + " mount of " + zoned + ": " + problem);
        }
        PageCacheOptions cache = options.pageCache();
        if (!cache.perBlockDirty() && cache.maxFolioSize() > superblock.blockSize()
                && zones.stream().anyMatch(Zone::isSequential)) {
            throw new NotSupportedException(NAME + " cannot mount with per-block dirty tracking off and "
                    + cache.maxFolioSize() + "-byte folios over " + superblock.blockSize()
                    + "-byte blocks: writeback would rewrite clean blocks below a sequential zone's write pointer");
        }
        return new ZonefsLikeMount(zoned, superblock, zones);
    }

    /**
     * Checks the zones are those mkfs saw (count and digest) and that the superblock's other fields
     * agree with them: the zone size, and how many conventional and sequential files mkfs made.
     */
    static void checkLayout(ZonefsSuperblock superblock, List<Zone> zones) throws CorruptFileSystemException {
        if (superblock.zoneCount() != zones.size() || superblock.layoutDigest() != ZonefsSuperblock.digest(zones)) {
            throw new CorruptFileSystemException(NAME + ": the device's zones (" + zones.size() + ") are not the"
                    + " ones mkfs found (" + superblock.zoneCount() + " zones, digest "
                    + Integer.toHexString(superblock.layoutDigest()) + ")");
        }
        long sequentialFiles = zones.stream().skip(1).filter(Zone::isSequential).count();
        long conventionalFiles = zones.size() - 1 - sequentialFiles;
        if (superblock.zoneSize() != zones.getFirst().size() || superblock.conventionalFiles() != conventionalFiles
                || superblock.sequentialFiles() != sequentialFiles) {
            throw new CorruptFileSystemException(NAME + ": the superblock says " + superblock.conventionalFiles()
                    + " conventional and " + superblock.sequentialFiles() + " sequential files in zones of "
                    + superblock.zoneSize() + " bytes; the zones make " + conventionalFiles + " and "
                    + sequentialFiles + " in zones of " + zones.getFirst().size() + " bytes");
        }
    }

    @Override
    public FsckReport fsck(BlockDevice device) throws IOException {
        return ZonefsLikeFsck.check(zoned(device));
    }

    private static ZonedBlockDevice zoned(BlockDevice device) throws NotSupportedException {
        return device.zoned().orElseThrow(() -> new NotSupportedException(NAME + " needs a zoned device"
                + " (a ZonedBlockDevice, e.g. iomap-devices' ZonedDevice over a RAM or file device); got " + device));
    }
}
