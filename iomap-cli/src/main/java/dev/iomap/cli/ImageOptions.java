package dev.iomap.cli;

import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.NotSupportedException;
import dev.iomap.device.BlockDevice;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.devices.OverlayDevice;
import dev.iomap.devices.ZonedDevice;
import dev.iomap.devices.nbd.NbdBlockDevice;
import dev.iomap.devices.nbd.NbdExport;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.ProbedFormat;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The options every image command shares: the adapter, the image file and its block size. An image
 * is opened as a device whose logical block size is the filesystem's block size (adapters such as
 * xfs-like require them to be equal). Like {@code blkid}, the commands on an existing image read the
 * adapter and the block size from its superblock ({@link FileSystemAdapter#probeFormat}, through a
 * read-only 512-byte-block view, before the image is opened): {@code --adapter} and
 * {@code --block-size} are needed only by mkfs, and one given that disagrees with the image is
 * refused in one line.
 *
 * <p>{@code --cache} ({@link ImageCache}) says whether an existing image is opened with {@code O_DIRECT}
 * ({@code none}, the default; buffered after a one-line notice where the host refuses it) or through
 * the host's page cache ({@code host}). Probing, and mkfs, read and write through the host's page cache.
 *
 * <p>How a command holds the image ({@link FileBlockDevice}'s lock): mount and mkfs for writing,
 * alone; fsck read-only and stat read-only under an in-memory overlay, sharing the image with other
 * read-only commands. An image holding an emulated zoned device ({@link ZonedDevice}) is opened as
 * one, over the file device, so that a zoned adapter sees its zones; it is probed through it too.
 *
 * <p>IMAGE may also be an NBD export, {@code nbd://HOST[:PORT]/EXPORT} ({@link NbdExport}): it is then
 * opened as an {@link NbdBlockDevice} (as large as the export; {@code --cache} does not apply), probed
 * the same way, and shared with whoever else the server lets connect (an NBD server has no image lock:
 * the filesystem's own rules, or a cluster's glocks, keep writers apart).
 */
final class ImageOptions {

    /** The adapter mkfs formats with when not given one. */
    static final String DEFAULT_ADAPTER = "xfs-like";

    /** The block size mkfs formats with, and an image whose superblock does not say is opened with. */
    static final int DEFAULT_BLOCK_SIZE = 4096;

    /** Device block size for probing an image: every adapter's superblock starts in it. */
    private static final int PROBE_BLOCK_SIZE = 512;

    @Option(names = "--adapter", paramLabel = "NAME",
            description = "the filesystem adapter (default: the one whose superblock the image holds;"
                    + " mkfs: " + DEFAULT_ADAPTER + ")")
    String adapter;

    /** The image file; null when {@link #nbd} is given instead. */
    Path image;

    /** The NBD export given as IMAGE; null for an image file. */
    NbdExport nbd;

    /**
     * @param spec IMAGE as given: a file, or an {@code nbd://} address
     * @throws TypeConversionException if an {@code nbd://} address does not parse, or is one this client
     *     cannot use ({@code nbds://})
     */
    @Parameters(index = "0", paramLabel = "IMAGE",
            description = "the image file, or an NBD export: nbd://HOST[:PORT]/EXPORT[?retry=SECONDS&fua=on]")
    void image(String spec) {
        if (!NbdExport.isNbd(spec)) {
            image = WorkingDirectory.resolve(spec);
            return;
        }
        try {
            nbd = NbdExport.parse(spec);
        } catch (IllegalArgumentException | NotSupportedException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }

    /** @return IMAGE for messages: the file, or the NBD export's address */
    String name() {
        return nbd != null ? nbd.toString() : String.valueOf(image);
    }

    @Option(names = "--block-size", paramLabel = "SIZE",
            description = "the filesystem's block size, 512 to 64k (default: what the image's superblock"
                    + " says; mkfs: " + DEFAULT_BLOCK_SIZE + ")")
    String blockSize;

    /** The command this mixin is part of, for its standard error; null if made by hand. */
    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--cache", paramLabel = "MODE", defaultValue = "none",
            description = "none: open the image with O_DIRECT, so its data is cached once, in iomap4j's cache"
                    + " (buffered for blocks smaller than the host filesystem's, and, with a one-line notice,"
                    + " where the host refuses O_DIRECT); host: through the host's page cache too (mkfs always"
                    + " uses the host's page cache; default: ${DEFAULT-VALUE})")
    String cache = "none";

    /** Whether the image is opened for a cluster node: probed as one too, sharing it with the other nodes. */
    private boolean clusterNode;

    /** The adapter and block size the image was opened with, once it is. */
    private ProbedFormat opened;

    /** The filesystem's block size as its superblock says, or {@link ProbedFormat#UNKNOWN_BLOCK_SIZE}. */
    private int probedBlockSize = ProbedFormat.UNKNOWN_BLOCK_SIZE;

    /** @return {@code --adapter}, or {@link #DEFAULT_ADAPTER} if not given: what mkfs formats with */
    String adapterOrDefault() {
        return adapter == null ? DEFAULT_ADAPTER : adapter;
    }

    /**
     * @return the adapter the image was opened for: {@code --adapter}, or the one its superblock
     *     names; before the image is open (or if opening it failed), {@code --adapter} or "any
     *     adapter", for messages
     */
    String adapter() {
        if (opened != null) {
            return opened.adapter();
        }
        return adapter == null ? "any adapter" : adapter;
    }

    /**
     * @return {@link #blockSize} in bytes, or {@link #DEFAULT_BLOCK_SIZE} if not given
     * @throws UsageException if it is not a size
     */
    int blockSizeBytes() throws UsageException {
        if (blockSize == null) {
            return DEFAULT_BLOCK_SIZE;
        }
        try {
            int bytes = Math.toIntExact(Units.parseSize(blockSize, 1024));
            if (Integer.bitCount(bytes) != 1 || bytes < 512 || bytes > 65536) {
                throw new IllegalArgumentException("must be a power of two from 512 to 65536");
            }
            return bytes;
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new UsageException("bad --block-size '" + blockSize + "': " + e.getMessage());
        }
    }

    /**
     * @return the existing image as a device with blocks of the filesystem's block size, as large as the file,
     *     held for writing: no other device may have it open
     * @throws UsageException if the block size is not one, or the image is not a regular file
     * @throws dev.iomap.device.DeviceBusyException if another device has the image open
     * @throws IOException if the image does not exist or is not a whole number of blocks
     */
    BlockDevice openExisting() throws UsageException, IOException {
        int bytes = checkExisting();
        if (nbd != null) {
            return zonedIfZoned(NbdBlockDevice.open(nbd, bytes));
        }
        return zonedIfZoned(cacheMode().open(image, bytes, direct -> FileBlockDevice.open(image, bytes, direct),
                warnings()));
    }

    /**
     * @return the existing image as a device for a cluster node ({@code mount --cluster}): for reading and
     *     writing, shared with other cluster nodes only ({@link FileBlockDevice#openShared}), with direct I/O
     * @throws dev.iomap.device.DeviceBusyException if a device that is not a cluster node's has the image open
     * @throws dev.iomap.api.NotSupportedException if the image's filesystem has no direct I/O
     */
    BlockDevice openShared() throws UsageException, IOException {
        clusterNode = true;
        int bytes = checkExisting();
        if (nbd != null) {
            return NbdBlockDevice.open(nbd, bytes);
        }
        return FileBlockDevice.openShared(image, bytes, true);
    }

    /**
     * @return the existing image as {@link #openExisting()} opens it, but read-only: shared with other
     *     read-only devices, refusing every write with {@link dev.iomap.device.ReadOnlyDeviceException}
     * @throws dev.iomap.device.DeviceBusyException if a device for writing has the image open
     */
    BlockDevice openReadOnly() throws UsageException, IOException {
        int bytes = checkExisting();
        return zonedIfZoned(openReadOnlyDevice(bytes));
    }

    /**
     * @return the existing image opened read-only as by {@link #openReadOnly()}, under an
     *     {@link OverlayDevice} that keeps in memory what a mount writes (its mounted flag, a journal
     *     replay), so that a command can mount the image without changing it
     * @throws dev.iomap.device.DeviceBusyException if a device for writing has the image open
     */
    BlockDevice openReadOnlyForMount() throws UsageException, IOException {
        int bytes = checkExisting();
        return zonedIfZoned(new OverlayDevice(openReadOnlyDevice(bytes)));
    }

    /**
     * @return {@code --cache} as a mode
     * @throws UsageException if it is neither {@code none} nor {@code host}
     */
    ImageCache cacheMode() throws UsageException {
        return ImageCache.parse(cache);
    }

    private BlockDevice openReadOnlyDevice(int bytes) throws UsageException, IOException {
        if (nbd != null) {
            return NbdBlockDevice.openReadOnly(nbd, bytes);
        }
        return cacheMode().open(image, bytes, direct -> FileBlockDevice.openReadOnly(image, bytes, direct),
                warnings());
    }

    /** @return where the line saying O_DIRECT was refused goes: the command's standard error */
    private Consumer<String> warnings() {
        if (mixee == null) {
            return System.err::println;
        }
        PrintWriter err = mixee.commandLine().getErr();
        return line -> {
            err.println(line);
            err.flush();
        };
    }

    /**
     * What {@code bench --device file:PATH} formats the image with: what its superblock says, like the
     * other image commands, where it holds a filesystem an adapter recognises; {@code --adapter} and
     * {@code --block-size} (or {@link #DEFAULT_ADAPTER} and {@link #DEFAULT_BLOCK_SIZE}) where there is
     * no image ({@link #image} null: a RAM device), or it does not exist, is empty, or holds nothing
     * recognised (a zoned image's filesystem is recognised through its zones, and its block size is
     * the zoned device's).
     *
     * @return the adapter and the filesystem block size
     * @throws UsageException if an option given disagrees with the image, or no adapter was given and
     *     more than one recognised it
     * @throws IOException if the image cannot be read
     */
    ProbedFormat formatOfImageOrGiven() throws UsageException, IOException {
        int given = blockSizeBytes();
        ProbedFormat options = new ProbedFormat(adapterOrDefault(), given);
        if (image == null || !Files.isRegularFile(image) || Files.size(image) == 0) {
            return options;
        }
        Probe probe = probe(image, false);
        if (probe.found().isEmpty()) {
            return options;
        }
        return format(probe, given);
    }

    /**
     * @return the block size the image's superblock says, if it was read when the image was opened
     *     (not one assumed from {@code --block-size} or the default)
     */
    OptionalInt probedBlockSize() {
        return probedBlockSize == ProbedFormat.UNKNOWN_BLOCK_SIZE ? OptionalInt.empty()
                : OptionalInt.of(probedBlockSize);
    }

    /**
     * Checks that the image is an existing regular file (or an NBD export), probes it, and settles
     * {@link #opened}.
     *
     * @return the block size to open it with
     */
    private int checkExisting() throws UsageException, IOException {
        int given = blockSizeBytes();
        if (nbd != null) {
            return settle(probe(nbd), given);
        }
        if (!Files.exists(image)) {
            throw new NoSuchFileException(image.toString());
        }
        if (!Files.isRegularFile(image)) {
            throw new UsageException(image + " is not a regular file");
        }
        return settle(probe(image, clusterNode), given);
    }

    /**
     * Settles {@link #opened} from what probing found.
     *
     * @return the block size to open the image with
     */
    private int settle(Probe probe, int given) throws UsageException {
        opened = format(probe, given);
        probedBlockSize = probe.found().stream().filter(found -> found.adapter().equals(opened.adapter()))
                .mapToInt(ProbedFormat::blockSize).findFirst().orElse(ProbedFormat.UNKNOWN_BLOCK_SIZE);
        return opened.blockSize();
    }

    /**
     * What probing an image found.
     *
     * @param found what each adapter that recognised it read in its superblock
     * @param zonedBlockSize the block size of the emulated zoned device it holds, which the file must
     *     be opened with; 0 if it holds none
     */
    private record Probe(List<ProbedFormat> found, int zonedBlockSize) {
    }

    /**
     * @param probe what the image holds
     * @param given the block size given, or the default
     * @return the adapter and the device block size to open the image with
     * @throws UsageException if an option given disagrees with the image, or no adapter was given
     *     and none (or more than one) recognised it
     */
    private ProbedFormat format(Probe probe, int given) throws UsageException {
        ProbedFormat format = adapterFormat(probe.found(), given);
        if (probe.zonedBlockSize() == 0) {
            return format;
        }
        // The filesystem's block size, checked above if its superblock says it, may exceed the device's.
        boolean checked = probe.found().stream().anyMatch(probed -> probed.adapter().equals(format.adapter())
                && probed.blockSize() != ProbedFormat.UNKNOWN_BLOCK_SIZE);
        if (!checked && blockSize != null && given != probe.zonedBlockSize()) {
            throw new UsageException(name() + " holds an emulated zoned device with " + probe.zonedBlockSize()
                    + "-byte blocks, not " + given + " (--block-size)");
        }
        return new ProbedFormat(format.adapter(), probe.zonedBlockSize());
    }

    /**
     * @param found what the image's superblock says, per adapter that recognised it
     * @param given the block size given, or the default
     * @return the adapter, and the filesystem's block size
     */
    private ProbedFormat adapterFormat(List<ProbedFormat> found, int given) throws UsageException {
        if (adapter == null && found.isEmpty()) {
            throw new UsageException(name() + " holds no filesystem that an adapter recognises (adapters: "
                    + String.join(", ", IomapFileSystems.adapters()) + "): give --adapter");
        }
        if (adapter == null && found.size() > 1) {
            throw new UsageException(name() + " looks like a " + names(found) + " filesystem: give --adapter");
        }
        if (found.isEmpty()) {
            return new ProbedFormat(adapter, given);
        }
        ProbedFormat format = found.getFirst();
        if (adapter != null) {
            format = found.stream().filter(probed -> probed.adapter().equals(adapter)).findFirst()
                    .orElseThrow(() -> new UsageException(name() + " holds a " + names(found)
                            + " filesystem, not " + adapter + " (--adapter)"));
        }
        if (format.blockSize() == ProbedFormat.UNKNOWN_BLOCK_SIZE) {
            return new ProbedFormat(format.adapter(), given);
        }
        if (blockSize != null && format.blockSize() != given) {
            throw new UsageException(name() + " holds a " + format.adapter() + " filesystem with "
                    + format.blockSize() + "-byte blocks, not " + given + " (--block-size)");
        }
        return format;
    }

    private static String names(List<ProbedFormat> found) {
        return found.stream().map(ProbedFormat::adapter).collect(Collectors.joining(" or "));
    }

    /**
     * Reads the image's first blocks, read-only through a {@link #PROBE_BLOCK_SIZE}-byte-block view
     * (and the emulated zoned device it holds, if any), for the adapters that recognise it.
     *
     * @param image an existing regular file
     * @param clusterNode whether to read it as a cluster node ({@link FileBlockDevice#openShared}), beside
     *     the nodes that have it mounted
     * @return what it holds; nothing if the file is not a whole number of probe blocks
     * @throws dev.iomap.device.DeviceBusyException if a device for writing has the image open
     * @throws IOException if the image cannot be read, or holds a damaged zoned device
     */
    private static Probe probe(Path image, boolean clusterNode) throws IOException {
        long size = Files.size(image);
        if (size == 0 || size % PROBE_BLOCK_SIZE != 0) {
            return new Probe(List.of(), 0);
        }
        try (FileBlockDevice probed = clusterNode ? FileBlockDevice.openShared(image, PROBE_BLOCK_SIZE, false)
                : FileBlockDevice.openReadOnly(image, PROBE_BLOCK_SIZE, false)) {
            if (!ZonedDevice.holdsZones(probed)) {
                return new Probe(Adapters.probeFormats(probed), 0);
            }
            try (ZonedDevice zoned = ZonedDevice.probe(probed).orElseThrow()) {
                return new Probe(Adapters.probeFormats(zoned), zoned.blockSize());
            }
        }
    }

    /**
     * Probes an NBD export as {@link #probe(Path, boolean)} probes a file: read-only, through
     * {@link #PROBE_BLOCK_SIZE}-byte blocks.
     */
    private static Probe probe(NbdExport export) throws IOException {
        try (NbdBlockDevice probed = NbdBlockDevice.openReadOnly(export, PROBE_BLOCK_SIZE)) {
            if (!ZonedDevice.holdsZones(probed)) {
                return new Probe(Adapters.probeFormats(probed), 0);
            }
            try (ZonedDevice zoned = ZonedDevice.probe(probed).orElseThrow()) {
                return new Probe(Adapters.probeFormats(zoned), zoned.blockSize());
            }
        }
    }

    /** @return {@code device}, or the zoned device it holds over it; on failure it is closed */
    private static BlockDevice zonedIfZoned(BlockDevice device) throws IOException {
        try {
            return ZonedDevice.holdsZones(device) ? ZonedDevice.open(device) : device;
        } catch (IOException | RuntimeException e) {
            try (device) {
                throw e;
            }
        }
    }
}
