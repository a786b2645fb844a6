package dev.iomap.cli;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsStat;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.cli.bench.ZoneOptions;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import dev.iomap.devices.nbd.NbdBlockDevice;
import dev.iomap.devices.nbd.NbdExport;
import dev.iomap.spi.FileSystemAdapter;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code iomap mkfs}: formats an image file, or an NBD export ({@code nbd://HOST:PORT/EXPORT}, as large as
 * the export unless {@code --size} says less), with an adapter's empty filesystem.
 */
@Command(name = "mkfs", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Formats an image file (created, or resized to --size) with an adapter's empty filesystem.")
final class MkfsCommand implements Callable<Integer> {

    /** Device block size for looking at an existing image: every adapter's superblock starts in it. */
    private static final int PROBE_BLOCK_SIZE = 512;

    @Spec
    private CommandSpec spec;

    @Mixin
    private ImageOptions image;

    @Option(names = "--size", paramLabel = "SIZE",
            description = "image size, e.g. 256m; needed when IMAGE does not exist (default: its size)")
    private String size;

    @Option(names = "--label", defaultValue = "", paramLabel = "LABEL", description = "the filesystem's label")
    private String label;

    @Option(names = {"-o", "--property"}, paramLabel = "KEY=VALUE", split = ",",
            description = "an adapter-specific format setting, e.g. agcount=4 (repeatable, or a comma list); for an adapter that"
                    + " needs a zoned device (zonefs-like) the zones: zone-size=SIZE,conventional=N[,capacity=SIZE,"
                    + "max-open=N] make a zoned image of --size bytes of zones")
    private Map<String, String> properties = new LinkedHashMap<>();

    @Option(names = "--force", description = "format even if IMAGE already holds a filesystem")
    private boolean force;

    @Option(names = "--preallocate", description = "write zeroes over the whole image before formatting, so that"
            + " the host holds every block of it written (qemu-img's preallocation=full): writes into the mounted"
            + " image are then overwrites on the host, faster with O_DIRECT; costs the image's size on disk")
    private boolean preallocate;

    /**
     * Checks everything first (options, adapter, size, that the image is free and holds no
     * filesystem unless --force), and only then resizes and formats: a refused mkfs leaves the
     * image as it was.
     */
    @Override
    public Integer call() throws Exception {
        int blockSize = image.blockSizeBytes();
        ZoneOptions zones = ZoneOptions.take(properties);
        FormatOptions options;
        try {
            options = new FormatOptions(blockSize, label, properties);
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad format options: " + e.getMessage());
        }
        FileSystemAdapter adapter = Adapters.named(image.adapterOrDefault());
        ZoneLayout layout = layout(adapter, zones, blockSize);
        long capacity = layout == null ? capacity(blockSize) : layout.zonedBytes();
        try {
            if (layout == null) {
                adapter.checkFormat(blockSize, capacity, options);
            } else {
                adapter.checkFormat(blockSize, layout.zones(), options);
            }
        } catch (IllegalArgumentException e) {
            throw new UsageException(image.adapterOrDefault() + ": " + e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        boolean created = image.nbd == null && !Files.exists(image.image);
        try {
            format(blockSize, capacity, layout, options, out);
        } catch (Exception | Error e) {
            if (created) {
                // an image mkfs made and could not finish (the file system refused its size, a device
                // error) is not left behind as an empty or half-written file
                Files.deleteIfExists(image.image);
            }
            throw e;
        }
        return 0;
    }

    /** {@link Preallocation#zeroedIf} with {@code --preallocate}, showing its progress on a terminal. */
    @SuppressWarnings("try") // the line shows while the zeroes are written
    private BlockDevice preallocated(BlockDevice empty, long bytes) throws IOException {
        if (!preallocate) {
            return empty;
        }
        try (StatusLine line = StatusLine.start(spec.commandLine().getErr(), "preallocating " + image.name(),
                () -> empty.stats().dataBytesWritten(), bytes)) {
            return Preallocation.zeroedIf(preallocate, empty, bytes);
        }
    }

    /**
     * Formats the image: a plain device of {@code capacity} bytes, or, with a layout, an emulated
     * zoned device of it over the file (which then holds the zone state in front of the zones).
     */
    private void format(int blockSize, long capacity, ZoneLayout layout, FormatOptions options, PrintWriter out)
            throws UsageException, IOException {
        long fileBytes = layout == null ? capacity : layout.backingBytes(blockSize);
        BlockDevice file = image.nbd != null ? openNbd(blockSize, fileBytes) : preallocated(openEmpty(blockSize, fileBytes),
                fileBytes);
        try (BlockDevice device = layout == null ? file : ZonedDevice.create(file, layout)) {
            IomapFileSystems.format(image.adapterOrDefault(), device, options);
            try (IomapFileSystem fs = IomapFileSystems.mount(image.adapterOrDefault(), device,
                    MountOptions.of(PageCacheOptions.defaults()))) {
                FsStat stat = fs.statfs();
                out.println(image.name() + ": " + image.adapterOrDefault() + " filesystem, " + capacity + " bytes, block size "
                        + stat.blockSize() + ", " + stat.totalBlocks() + " blocks (" + stat.freeBlocks() + " free)"
                        + (label.isEmpty() ? "" : ", label '" + label + "'")
                        + (layout == null ? "" : ", on a zoned device of " + ZoneOptions.describe(layout)));
            }
        }
    }

    /**
     * Decides the zones: none for an adapter that takes a plain device (refusing zone settings);
     * for one that requires a zoned device, the {@code -o} zone settings over {@code --size} (or the
     * file's size), or, without them, the zones of the emulated zoned device the image already holds
     * (so {@code mkfs --force} formats a zoned image again on its own zones).
     *
     * @return the zones to make, or null for a plain image
     * @throws UsageException if the settings do not fit the adapter, the size or the block size
     */
    private ZoneLayout layout(FileSystemAdapter adapter, ZoneOptions zones, int blockSize)
            throws UsageException, IOException {
        String name = adapter.name();
        if (!adapter.requiresZonedDevice()) {
            if (zones.given()) {
                throw new UsageException(name + " takes a plain block device, not zones: leave out -o "
                        + String.join(", ", ZoneOptions.KEYS));
            }
            return null;
        }
        if (zones.given()) {
            return zones.layout(capacity(blockSize), blockSize);
        }
        ZoneLayout existing = image.nbd != null ? null : existingZones(image.image, blockSize);
        if (existing == null) {
            throw new UsageException(name + " needs a zoned device: give -o zone-size=SIZE[,conventional=N,"
                    + "capacity=SIZE,max-open=N] (with --size, the zoned device's size)");
        }
        return existing;
    }

    /**
     * @param image an image file, which need not exist
     * @param blockSize the block size the zones are to be used with
     * @return the zones of the emulated zoned device {@code image} holds, or null if it holds none
     * @throws UsageException if it holds one of another block size than {@code blockSize}
     * @throws IOException if the image cannot be read, or is in use for writing
     */
    static ZoneLayout existingZones(Path image, int blockSize) throws UsageException, IOException {
        long existing = Files.isRegularFile(image) ? Files.size(image) : 0;
        if (existing == 0 || existing % PROBE_BLOCK_SIZE != 0) {
            return null;
        }
        try (FileBlockDevice probed = FileBlockDevice.openReadOnly(image, PROBE_BLOCK_SIZE, false);
                ZonedDevice zoned = ZonedDevice.probe(probed).orElse(null)) {
            if (zoned == null) {
                return null;
            }
            if (zoned.blockSize() != blockSize) {
                throw new UsageException(image + " holds an emulated zoned device with " + zoned.blockSize()
                        + "-byte blocks, not " + blockSize + " (--block-size): give -o zone-size=... to make new zones");
            }
            return zoned.layout();
        }
    }

    /** @return the capacity: --size, or the existing file's (or NBD export's) size, in whole blocks */
    private long capacity(int blockSize) throws UsageException, IOException {
        if (image.nbd == null && Files.exists(image.image) && !Files.isRegularFile(image.image)) {
            throw new UsageException(image.image + " is not a regular file");
        }
        long bytes;
        if (size != null) {
            try {
                bytes = Units.parseSize(size, 1024);
            } catch (IllegalArgumentException e) {
                throw new UsageException("bad --size '" + size + "': " + e.getMessage());
            }
        } else if (image.nbd != null) {
            try (NbdBlockDevice export = NbdBlockDevice.openReadOnly(image.nbd, PROBE_BLOCK_SIZE)) {
                bytes = export.capacity();
            }
        } else if (Files.isRegularFile(image.image)) {
            bytes = Files.size(image.image);
        } else {
            throw new UsageException(image.image + " does not exist: give --size to create it");
        }
        bytes -= bytes % blockSize;
        if (bytes <= 0) {
            throw new UsageException("the size " + (size != null ? size
                    : image.nbd != null ? "of " + image.name() : Files.size(image.image) + " bytes")
                    + " is smaller than one block of " + blockSize + " bytes");
        }
        return bytes;
    }

    /**
     * Refuses an image that is in use or holds a filesystem (or an emulated zoned device, whatever it
     * holds); bench calls it before it formats.
     *
     * @param image an image file, which need not exist
     * @throws UsageException if it holds a filesystem
     * @throws IOException if it is in use or cannot be read
     */
    static void refuseFormatted(Path image) throws UsageException, IOException {
        long existing = Files.isRegularFile(image) ? Files.size(image) : 0;
        if (existing == 0 || existing % PROBE_BLOCK_SIZE != 0) {
            return;
        }
        try (FileBlockDevice probed = FileBlockDevice.open(image, PROBE_BLOCK_SIZE, false)) {
            refuseFormatted(image, probed);
        }
    }

    /**
     * Refuses an NBD export that holds a filesystem (or an emulated zoned device); bench calls it before it
     * formats one.
     *
     * @param export the export
     * @throws UsageException if it holds a filesystem
     * @throws IOException if it cannot be read
     */
    static void refuseFormatted(NbdExport export) throws UsageException, IOException {
        try (NbdBlockDevice probed = NbdBlockDevice.openReadOnly(export, PROBE_BLOCK_SIZE)) {
            refuseFormatted(export, probed);
        }
    }

    private static void refuseFormatted(Object image, BlockDevice probed) throws UsageException, IOException {
        List<String> found = Adapters.probe(probed);
        if (!found.isEmpty()) {
            throw new UsageException(image + " already holds a " + String.join(" or ", found)
                    + " filesystem: give --force to overwrite it");
        }
        if (ZonedDevice.holdsZones(probed)) {
            throw new UsageException(image + " already holds " + zonedContents(probed)
                    + ": give --force to overwrite it");
        }
    }

    /**
     * An emulated zoned device is refused whatever it holds: an adapter on it may not be on the class
     * path, and its zone state is data too.
     *
     * @return what the zoned device {@code probed} holds, for the message: the filesystems found on it,
     *     or its zones
     */
    private static String zonedContents(BlockDevice probed) throws IOException {
        try (ZonedDevice zoned = ZonedDevice.probe(probed).orElseThrow()) {
            List<String> found = Adapters.probe(zoned);
            return found.isEmpty()
                    ? "an emulated zoned device (" + zoned.layout().zoneCount() + " zones of "
                            + zoned.layout().zoneSize() + " bytes)"
                    : "a " + String.join(" or ", found) + " filesystem on an emulated zoned device";
        } catch (CorruptFileSystemException e) {
            return "an emulated zoned device whose zones cannot be read (" + e.getMessage() + ")";
        }
    }

    /**
     * Opens the NBD export for writing, as a device of {@code capacity} bytes, after refusing it (unless
     * --force) if it holds a filesystem; an export cannot be preallocated from here.
     */
    private BlockDevice openNbd(int blockSize, long capacity) throws UsageException, IOException {
        if (preallocate) {
            throw new UsageException("--preallocate is for image files: the NBD server decides how " + image.name()
                    + " holds its blocks");
        }
        refuseFormattedExport();
        return NbdBlockDevice.open(image.nbd, blockSize, capacity);
    }

    /** Refuses the NBD export if it holds a filesystem or a zoned device, unless --force. */
    private void refuseFormattedExport() throws UsageException, IOException {
        if (force) {
            return;
        }
        refuseFormatted(image.nbd);
    }

    /**
     * Opens the image, locked, refuses it if it holds a filesystem (unless --force), and only then
     * gives it the capacity.
     */
    private FileBlockDevice openEmpty(int blockSize, long capacity) throws UsageException, IOException {
        long existing = Files.isRegularFile(image.image) ? Files.size(image.image) : 0;
        if (existing == 0 || existing % PROBE_BLOCK_SIZE != 0) {
            FileBlockDevice device = FileBlockDevice.open(image.image, blockSize, capacity, false);
            return existing > capacity ? device.resize(blockSize, capacity) : device;
        }
        FileBlockDevice probed = FileBlockDevice.open(image.image, PROBE_BLOCK_SIZE, false);
        try {
            if (!force) {
                refuseFormatted(image.image, probed);
            }
            return probed.resize(blockSize, capacity);
        } catch (IOException | UsageException | RuntimeException e) {
            probed.close();
            throw e;
        }
    }
}
