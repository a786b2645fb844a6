package dev.iomap.testkit;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.spi.AdapterMounts;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.FsckOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The adapter under test, as every suite of the kit sees it: how to format, mount and check it, what
 * it declares it can do, and on which geometry it runs. Immutable; the {@code with...} methods return
 * copies.
 *
 * <pre>{@code
 * AdapterFixture fixture = AdapterFixture.of(new MyAdapter(), new Geometry(4096, 4096, 0));
 * }</pre>
 *
 * <p>By default the instance given to {@link #of} is mounted through {@link AdapterMounts#mount} (an
 * engine such as {@code iomap-core} must be on the test class path; the adapter need not be a
 * registered {@link dev.iomap.spi.AdapterPlugin}), so format, mount and fsck all run on that one
 * instance; {@link #withMounter} replaces that, e.g. with a mount by name through
 * {@link dev.iomap.api.IomapFileSystems#mount}. Devices are {@link RamBlockDevice}s of
 * {@link #deviceBytes()} bytes with 512-byte sectors (or blocks of the filesystem's size, see
 * {@link #withDeviceBlockSizeOfFilesystem()}), so that crash tests can take images of them; an
 * adapter that needs more than a plain block device (a zoned one) sees them through a
 * {@link DeviceLayer}.
 */
public final class AdapterFixture {
    /** Default device size: 64 MiB. */
    public static final long DEFAULT_DEVICE_BYTES = 64L << 20;
    /** Sector size of the devices the kit makes. */
    public static final int SECTOR_SIZE = 512;

    /** Mounts a formatted device; the default calls {@link AdapterMounts#mount}. */
    @FunctionalInterface
    public interface Mounter {
        /**
         * @param adapter the adapter under test
         * @param device the device
         * @param options the mount options of the geometry
         * @return the mounted filesystem
         * @throws IOException as {@link AdapterMounts#mount}
         */
        IomapFileSystem mount(FileSystemAdapter adapter, BlockDevice device, MountOptions options) throws IOException;
    }

    /**
     * What the adapter is given instead of the kit's device, e.g. a zoned emulation over it. The kit
     * keeps the device underneath (to cut its power, inject faults, take images); the layer is
     * rebuilt from it for every format, mount and fsck, so whatever it keeps must live on the device.
     */
    public interface DeviceLayer {
        /**
         * @param device a blank kit device
         * @return what {@link FileSystemAdapter#format} gets
         * @throws IOException if the layer cannot be set up
         */
        BlockDevice formatting(BlockDevice device) throws IOException;

        /**
         * @param device a kit device holding a formatted image
         * @return what {@link FileSystemAdapter#mount} and {@link FileSystemAdapter#fsck} get
         * @throws IOException if the layer cannot be opened
         */
        BlockDevice opening(BlockDevice device) throws IOException;
    }

    /**
     * Files that exist in every freshly formatted filesystem, for an adapter whose namespace is fixed
     * (no create, e.g. one file per zone): the suites that support it ({@link CapabilityContract})
     * open these instead of creating their own. Each such test then gets a freshly formatted
     * filesystem, since an existing file may not be rewritable from offset 0 a second time.
     *
     * @param file the file the probes run on; it must accept 4 blocks written at offset 0 once
     * @param other a second file, the target of the clone probe
     * @param truncateSize the size the TRUNCATE probe truncates {@code file} to, one the adapter allows
     *     for it (-1: one block, as for a created file)
     * @param refusedHere capabilities the adapter declares but {@code file} itself refuses (an
     *     adapter whose rules differ by kind of file, e.g. RANDOM_WRITE on an append-only file): the
     *     kit expects their probe on {@code file} to fail with {@link dev.iomap.api.NotSupportedException}
     */
    public record ExistingFiles(String file, String other, long truncateSize, Set<Capability> refusedHere) {
        /** Checks and copies. */
        public ExistingFiles {
            Objects.requireNonNull(file, "file");
            Objects.requireNonNull(other, "other");
            refusedHere = Set.copyOf(refusedHere);
        }

        /**
         * @param file the file the probes run on
         * @param other the clone probe's target
         * @return existing files truncated to one block by the TRUNCATE probe, refusing nothing declared
         */
        public static ExistingFiles of(String file, String other) {
            return new ExistingFiles(file, other, -1, Set.of());
        }

        /**
         * @param size the size the TRUNCATE probe uses on {@link #file()}
         * @return a copy with it
         */
        public ExistingFiles truncatingTo(long size) {
            return new ExistingFiles(file, other, size, refusedHere);
        }

        /**
         * @param capabilities declared capabilities {@link #file()} refuses
         * @return a copy with them
         */
        public ExistingFiles refusing(Capability... capabilities) {
            return new ExistingFiles(file, other, truncateSize, Set.of(capabilities));
        }
    }

    private static final DeviceLayer NO_LAYER = new DeviceLayer() {
        @Override
        public BlockDevice formatting(BlockDevice device) {
            return device;
        }

        @Override
        public BlockDevice opening(BlockDevice device) {
            return device;
        }
    };

    /** Everything a fixture is made of. */
    private record Parts(FileSystemAdapter adapter, Geometry geometry, Mounter mounter, long deviceBytes,
            int deviceBlockSize, Map<String, String> formatProperties, KitSettings settings, boolean memoryPressure,
            Map<String, String> knownFailures, DeviceLayer layer, ExistingFiles existingFiles) {
    }

    private final Parts parts;

    private AdapterFixture(Parts parts) {
        this.parts = parts;
    }

    /**
     * @param adapter the adapter under test; its {@link FileSystemAdapter#capabilities()} are what the
     *     kit holds it to
     * @param geometry block, page and folio sizes
     * @return a fixture mounting {@code adapter} itself through {@link AdapterMounts}
     */
    public static AdapterFixture of(FileSystemAdapter adapter, Geometry geometry) {
        return new AdapterFixture(new Parts(Objects.requireNonNull(adapter, "adapter"),
                Objects.requireNonNull(geometry, "geometry"),
                AdapterMounts::mount,
                DEFAULT_DEVICE_BYTES, SECTOR_SIZE, Map.of(), KitSettings.fromSystemProperties(), false, Map.of(),
                NO_LAYER, null));
    }

    /**
     * @param value how to mount
     * @return a copy that mounts with {@code value}
     */
    public AdapterFixture withMounter(Mounter value) {
        Parts p = parts;
        return new AdapterFixture(new Parts(p.adapter, p.geometry, Objects.requireNonNull(value, "mounter"),
                p.deviceBytes, p.deviceBlockSize, p.formatProperties, p.settings, p.memoryPressure, p.knownFailures,
                p.layer, p.existingFiles));
    }

    /**
     * @param value bytes per test device, a multiple of the device block size
     * @return a copy using devices of that size
     */
    public AdapterFixture withDeviceBytes(long value) {
        Parts p = parts;
        return new AdapterFixture(new Parts(p.adapter, p.geometry, p.mounter, value, p.deviceBlockSize,
                p.formatProperties, p.settings, p.memoryPressure, p.knownFailures, p.layer, p.existingFiles));
    }

    /**
     * Devices whose logical block size is the filesystem block size of the geometry, for adapters that
     * need the two equal (the default is {@link #SECTOR_SIZE}-byte sectors). A power cut tears writes
     * at the device block size.
     *
     * @return a copy making such devices
     */
    public AdapterFixture withDeviceBlockSizeOfFilesystem() {
        Parts p = parts;
        return new AdapterFixture(new Parts(p.adapter, p.geometry, p.mounter, p.deviceBytes, 0, p.formatProperties,
                p.settings, p.memoryPressure, p.knownFailures, p.layer, p.existingFiles));
    }

    /**
     * @param value adapter properties passed to every format
     * @return a copy formatting with them
     */
    public AdapterFixture withFormatProperties(Map<String, String> value) {
        Parts p = parts;
        return new AdapterFixture(new Parts(p.adapter, p.geometry, p.mounter, p.deviceBytes, p.deviceBlockSize,
                Map.copyOf(value), p.settings, p.memoryPressure, p.knownFailures, p.layer, p.existingFiles));
    }

    /**
     * @param value op counts, seeds and log directory
     * @return a copy using them
     */
    public AdapterFixture withSettings(KitSettings value) {
        Parts p = parts;
        return new AdapterFixture(new Parts(p.adapter, p.geometry, p.mounter, p.deviceBytes, p.deviceBlockSize,
                p.formatProperties, Objects.requireNonNull(value, "settings"), p.memoryPressure, p.knownFailures,
                p.layer, p.existingFiles));
    }

    /**
     * @param value what the adapter sees instead of the kit's devices
     * @return a copy formatting, mounting and checking through it
     */
    public AdapterFixture withDeviceLayer(DeviceLayer value) {
        Parts p = parts;
        return new AdapterFixture(new Parts(p.adapter, p.geometry, p.mounter, p.deviceBytes, p.deviceBlockSize,
                p.formatProperties, p.settings, p.memoryPressure, p.knownFailures,
                Objects.requireNonNull(value, "layer"), p.existingFiles));
    }

    /**
     * For an adapter with a fixed namespace: the suites that support it open {@code value}'s files
     * instead of creating theirs (see {@link ExistingFiles}).
     *
     * @param value the existing files
     * @return a copy using them
     */
    public AdapterFixture withExistingFiles(ExistingFiles value) {
        Parts p = parts;
        return new AdapterFixture(new Parts(p.adapter, p.geometry, p.mounter, p.deviceBytes, p.deviceBlockSize,
                p.formatProperties, p.settings, p.memoryPressure, p.knownFailures, p.layer,
                Objects.requireNonNull(value, "existingFiles")));
    }

    /**
     * @return whether a {@link DeviceLayer} stands between the kit's device and the adapter: device
     *     addresses the adapter reports are then the layer's, not the kit device's
     */
    public boolean layersTheDevice() {
        return parts.layer != NO_LAYER;
    }

    /** @return the existing files the suites use instead of creating theirs, or null (they create) */
    public ExistingFiles existingFiles() {
        return parts.existingFiles;
    }

    /**
     * Mounts under memory pressure: a page cache of a few of the largest folios, low dirty limits and
     * the flusher running every few milliseconds, so reclaim, throttled writers and background
     * writeback race the test's own operations.
     *
     * @return a copy mounting that way
     */
    public AdapterFixture underMemoryPressure() {
        Parts p = parts;
        return new AdapterFixture(new Parts(p.adapter, p.geometry, p.mounter, p.deviceBytes, p.deviceBlockSize,
                p.formatProperties, p.settings, true, p.knownFailures, p.layer, p.existingFiles));
    }

    /**
     * Skips one contract test of the kit for this adapter because of a known, reported bug: the test
     * is reported as aborted with {@code why}, never as passed. Keep the list short and each entry
     * pointing at the failing test that tracks the bug; remove it with the fix.
     *
     * @param testMethod the name of the kit's test method (e.g. {@code writersAndReadersUnderMemoryPressure})
     * @param why the bug and where it is tracked
     * @return a copy that skips that test
     */
    public AdapterFixture withKnownFailure(String testMethod, String why) {
        Map<String, String> known = new HashMap<>(parts.knownFailures);
        known.put(Objects.requireNonNull(testMethod, "testMethod"), Objects.requireNonNull(why, "why"));
        Parts p = parts;
        return new AdapterFixture(new Parts(p.adapter, p.geometry, p.mounter, p.deviceBytes, p.deviceBlockSize,
                p.formatProperties, p.settings, p.memoryPressure, Map.copyOf(known), p.layer, p.existingFiles));
    }

    /**
     * @param testMethod a test method name
     * @return why it is a known failure of this adapter, or null
     */
    public String knownFailure(String testMethod) {
        return parts.knownFailures.get(testMethod);
    }

    /** @return whether mounts are {@link #underMemoryPressure()} */
    public boolean isUnderMemoryPressure() {
        return parts.memoryPressure;
    }

    /** @return the logical block size of the devices this fixture makes */
    public int deviceBlockSize() {
        return parts.deviceBlockSize == 0 ? parts.geometry.blockSize() : parts.deviceBlockSize;
    }

    /** @return the adapter under test */
    public FileSystemAdapter adapter() {
        return parts.adapter;
    }

    /** @return the geometry */
    public Geometry geometry() {
        return parts.geometry;
    }

    /** @return the randomised-test settings */
    public KitSettings settings() {
        return parts.settings;
    }

    /** @return bytes per test device */
    public long deviceBytes() {
        return parts.deviceBytes;
    }

    /** @return what the adapter declares, with the implied capabilities added */
    public Set<Capability> capabilities() {
        return Capability.withImplied(parts.adapter.capabilities());
    }

    /**
     * @param capability a capability
     * @return whether the adapter has it (declared or implied)
     */
    public boolean has(Capability capability) {
        return capabilities().contains(capability);
    }

    /** @return {@code adapter/geometry} (and {@code +pressure}), for messages and seeds */
    public String label() {
        return parts.adapter.name() + "/" + parts.geometry.name() + (parts.memoryPressure ? "+pressure" : "");
    }

    /** @return a new zero-filled device of {@link #deviceBytes()} bytes and {@link #deviceBlockSize()} blocks */
    public RamBlockDevice newDevice() {
        return new RamBlockDevice(deviceBlockSize(), parts.deviceBytes);
    }

    /**
     * Formats with the geometry's block size and the fixture's properties.
     *
     * @param device the device
     * @throws IOException as {@link FileSystemAdapter#format}
     */
    public void format(BlockDevice device) throws IOException {
        parts.adapter.format(parts.layer.formatting(device),
                new FormatOptions(parts.geometry.blockSize(), "testkit", parts.formatProperties));
    }

    /**
     * @return a new device holding a freshly formatted filesystem
     * @throws IOException as {@link FileSystemAdapter#format}
     */
    public RamBlockDevice newFormattedDevice() throws IOException {
        RamBlockDevice device = newDevice();
        format(device);
        return device;
    }

    /**
     * Mounts with the geometry's options and the flusher off (deterministic device traffic).
     *
     * @param device a formatted device
     * @return the mounted filesystem
     * @throws IOException as {@link FileSystemAdapter#mount}
     */
    public IomapFileSystem mount(BlockDevice device) throws IOException {
        return mount(device, false);
    }

    /**
     * @param device a formatted device
     * @param backgroundWriteback whether the flusher runs
     * @return the mounted filesystem
     * @throws IOException as {@link FileSystemAdapter#mount}
     */
    public IomapFileSystem mount(BlockDevice device, boolean backgroundWriteback) throws IOException {
        return parts.mounter.mount(parts.adapter, parts.layer.opening(device), mountOptions(backgroundWriteback));
    }

    /**
     * @param backgroundWriteback whether the flusher runs (always, under memory pressure)
     * @return the options every mount of this fixture uses
     */
    public MountOptions mountOptions(boolean backgroundWriteback) {
        Geometry geometry = parts.geometry;
        if (!parts.memoryPressure) {
            return geometry.mountOptions(backgroundWriteback);
        }
        long budget = Math.max(4 * geometry.maxFolioSize(), 1L << 20);
        PageCacheOptions options = geometry.pageCacheOptions().toBuilder()
                .cacheBudgetBytes(budget)
                .dirtyBackgroundBytes(256 << 10)
                .dirtyLimitBytes(1 << 20)
                .dirtyExpire(Duration.ofMillis(20))
                .writebackInterval(Duration.ofMillis(5))
                .build();
        return new MountOptions(options, true);
    }

    /**
     * @param device an unmounted device
     * @return the adapter's check of it
     * @throws IOException as {@link FileSystemAdapter#fsck}
     */
    public FsckReport fsck(BlockDevice device) throws IOException {
        return parts.adapter.fsck(parts.layer.opening(device));
    }

    /**
     * @param device an unmounted device
     * @param options what to check beyond the metadata (a scrub needs {@link Capability#DATA_CHECKSUMS})
     * @return the adapter's check of it
     * @throws IOException as {@link FileSystemAdapter#fsck(BlockDevice, FsckOptions)}
     */
    public FsckReport fsck(BlockDevice device, FsckOptions options) throws IOException {
        return parts.adapter.fsck(parts.layer.opening(device), options);
    }

    @Override
    public String toString() {
        return label();
    }
}
