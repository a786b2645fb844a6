package dev.iomap.cli.bench;

import dev.iomap.api.NotSupportedException;
import dev.iomap.device.BlockDevice;
import dev.iomap.cli.ImageCache;
import dev.iomap.cli.Preallocation;
import dev.iomap.cli.Units;
import dev.iomap.cli.UsageException;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.nbd.NbdBlockDevice;
import dev.iomap.devices.nbd.NbdExport;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The device a benchmark formats: {@code ram}, {@code ram:SIZE} or
 * {@code file:PATH[,cache=MODE][,size=SIZE][,prealloc=MODE]} ({@link ImageCache}: {@code none}, the
 * default, opens the image with {@code O_DIRECT}, falling back to buffered I/O with a one-line notice
 * where the host refuses it; {@code host} opens it buffered, through the host's page cache;
 * {@code prealloc=full} writes zeroes over the whole image before it is formatted, as
 * {@code qemu-img}'s {@code preallocation=full} does, so that the host holds every block of it written
 * and the bench's writes are overwrites there, {@code off} is the default). A path may contain commas;
 * a trailing {@code ,word=value} is an option, and one other than {@code cache}, {@code size} and
 * {@code prealloc} is refused rather than taken as part of the file name. Without a size
 * the device is sized for the job: twice the bytes of its files plus 64 MiB (a RAM device only
 * allocates what is written; a file grows sparsely). The device's logical block size is the
 * filesystem's block size (adapters such as xfs-like require them to be equal). {@code nbd://HOST[:PORT]/EXPORT}
 * ({@link NbdExport}) benchmarks on an NBD export, of which the device uses the automatic size (the export must
 * be at least that large).
 */
public sealed interface DeviceSpec {

    /**
     * @param text {@code ram}, {@code ram:SIZE}, {@code file:PATH}, optionally followed by
     *     {@code ,cache=MODE}, {@code ,size=SIZE} and {@code ,prealloc=MODE} in any order
     * @return the spec
     * @throws UsageException if the text is none of those
     */
    static DeviceSpec parse(String text) throws UsageException {
        if (NbdExport.isNbd(text)) {
            try {
                return new Nbd(NbdExport.parse(text));
            } catch (IllegalArgumentException | NotSupportedException e) {
                throw new UsageException("bad --device '" + text + "': " + e.getMessage());
            }
        }
        if (text.equals("ram")) {
            return new Ram(0);
        }
        if (text.startsWith("ram:")) {
            return new Ram(parseSize(text, text.substring(4)));
        }
        if (text.startsWith("file:") && text.length() > 5) {
            String path = text.substring(5);
            ImageCache cache = ImageCache.NONE;
            long size = 0;
            boolean preallocate = false;
            boolean sawCache = false;
            boolean sawSize = false;
            boolean sawPrealloc = false;
            while (true) {
                Matcher option = TRAILING_OPTION.matcher(path);
                if (!option.matches()) {
                    break;
                }
                String key = option.group(2);
                String value = option.group(3);
                if (key.equals("cache") && !sawCache) {
                    cache = ImageCache.parse(value);
                    sawCache = true;
                } else if (key.equals("size") && !sawSize) {
                    size = parseSize(text, value);
                    sawSize = true;
                } else if (key.equals("prealloc") && !sawPrealloc) {
                    preallocate = switch (value) {
                        case "full" -> true;
                        case "off" -> false;
                        default -> throw new UsageException("bad --device '" + text + "': prealloc=" + value
                                + " (have prealloc=off and prealloc=full)");
                    };
                    sawPrealloc = true;
                } else if (key.equals("cache") || key.equals("size") || key.equals("prealloc")) {
                    throw new UsageException("bad --device '" + text + "': " + key + "= given twice");
                } else {
                    throw new UsageException("bad --device '" + text + "': no option " + key
                            + "= for an image file (have cache=, size= and prealloc=)");
                }
                path = option.group(1);
            }
            if (!path.isEmpty()) {
                return new ImageFile(Path.of(path), cache, size, preallocate);
            }
        }
        throw new UsageException("bad --device '" + text + "': use ram, ram:SIZE (e.g. ram:2g),"
                + " file:PATH[,cache=host][,size=SIZE][,prealloc=full] or nbd://HOST[:PORT]/EXPORT");
    }

    /**
     * A {@code ,key=value} at the end of an image path: a path may contain commas, but not a comma
     * followed by a word and {@code =} at its end.
     */
    Pattern TRAILING_OPTION = Pattern.compile("(.*),([A-Za-z_]+)=([^,/]*)");

    private static long parseSize(String text, String value) throws UsageException {
        try {
            long size = Units.parseSize(value, 1024);
            if (size <= 0) {
                throw new IllegalArgumentException("must be positive");
            }
            return size;
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad device size in '" + text + "': " + e.getMessage());
        }
    }

    /**
     * @param fileBytes bytes of all files the jobs create
     * @param blockSize the device's logical block size
     * @return the capacity to give the device, a multiple of {@code blockSize}
     */
    long capacityFor(long fileBytes, int blockSize);

    /**
     * Checks, before anything is written, that the machine can hold a device of this size.
     *
     * @param capacity bytes, from {@link #capacityFor}
     * @throws UsageException if it cannot
     */
    default void checkCapacity(long capacity) throws UsageException {
    }

    /**
     * @param capacity bytes, from {@link #capacityFor}: a multiple of {@code blockSize}
     * @param blockSize the device's logical block size
     * @param warnings where a line saying the image is opened otherwise than asked goes (its host
     *     refusing {@code O_DIRECT})
     * @return a new device, which the caller closes
     * @throws IOException if it cannot be created
     */
    BlockDevice open(long capacity, int blockSize, Consumer<String> warnings) throws IOException;

    /**
     * @param capacity bytes
     * @return how reports name the device
     */
    String describe(long capacity);

    /**
     * @param fileBytes bytes of files
     * @return the capacity chosen when none is given: a whole number of MiB, so of any block size
     */
    static long automaticCapacity(long fileBytes) {
        long mib = 1L << 20;
        long bytes = 2 * fileBytes + 64 * mib;
        return (bytes + mib - 1) / mib * mib;
    }

    /** @param size bytes, or 0 for the automatic size */
    record Ram(long size) implements DeviceSpec {

        @Override
        public long capacityFor(long fileBytes, int blockSize) {
            long bytes = size > 0 ? size : automaticCapacity(fileBytes);
            return (bytes + blockSize - 1) / blockSize * blockSize;
        }

        /** In huge pages: the bench measures the cache, not the host's page faults on the device. */
        @Override
        public BlockDevice open(long capacity, int blockSize, Consumer<String> warnings) {
            return RamBlockDevice.withHugePages(blockSize, capacity);
        }

        /** A RAM device may come to hold every byte: refuse one larger than the machine's memory. */
        @Override
        public void checkCapacity(long capacity) throws UsageException {
            long memory = ((com.sun.management.OperatingSystemMXBean)
                    ManagementFactory.getOperatingSystemMXBean()).getTotalMemorySize();
            if (capacity > memory) {
                throw new UsageException("a RAM device of " + (capacity >> 20) + " MiB is larger than this machine's "
                        + (memory >> 20) + " MiB of memory: use smaller files or --device file:PATH");
            }
        }

        @Override
        public String describe(long capacity) {
            return "ram:" + (capacity >> 20) + "MiB";
        }
    }

    /**
     * An NBD export: the device uses its first bytes, the automatic size (so the export must be at least
     * that large); the export is formatted over, and left as the run leaves it.
     *
     * @param export the export
     */
    record Nbd(NbdExport export) implements DeviceSpec {

        @Override
        public long capacityFor(long fileBytes, int blockSize) {
            long bytes = automaticCapacity(fileBytes);
            return (bytes + blockSize - 1) / blockSize * blockSize;
        }

        @Override
        public NbdBlockDevice open(long capacity, int blockSize, Consumer<String> warnings) throws IOException {
            return NbdBlockDevice.open(export, blockSize, capacity);
        }

        @Override
        public String describe(long capacity) {
            return export + " (" + (capacity >> 20) + "MiB)";
        }
    }

    /**
     * @param path the image file: created or extended as needed, left in place afterwards
     * @param cache whether it is opened with {@code O_DIRECT} ({@link ImageCache#NONE}) or through the
     *     host's page cache
     * @param size the device's capacity in bytes, or 0 for the automatic size
     * @param preallocate whether zeroes are written over the whole image when it is opened, before it is
     *     formatted ({@code prealloc=full})
     */
    record ImageFile(Path path, ImageCache cache, long size, boolean preallocate) implements DeviceSpec {

        /**
         * An image of the automatic size, not preallocated.
         *
         * @param path the image file
         * @param cache how it is opened
         */
        public ImageFile(Path path, ImageCache cache) {
            this(path, cache, 0, false);
        }

        @Override
        public long capacityFor(long fileBytes, int blockSize) {
            long bytes = size > 0 ? size : automaticCapacity(fileBytes);
            return (bytes + blockSize - 1) / blockSize * blockSize;
        }

        /** Opens the image; with {@link #preallocate}, writes zeroes over all of it and flushes them first. */
        @Override
        public FileBlockDevice open(long capacity, int blockSize, Consumer<String> warnings) throws IOException {
            return Preallocation.zeroedIf(preallocate, cache.open(path, blockSize,
                    direct -> FileBlockDevice.open(path, blockSize, capacity, direct), warnings), capacity);
        }

        @Override
        public String describe(long capacity) {
            return "file:" + path + " (" + (capacity >> 20) + "MiB" + (cache == ImageCache.HOST ? ", cache=host" : "")
                    + (preallocate ? ", prealloc=full" : "") + ")";
        }
    }
}
