package dev.iomap.cli;

import dev.iomap.device.BlockDevice;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.devices.OverlayDevice;
import dev.iomap.devices.ZonedDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The options every image command shares: the adapter, the image file and its block size. An image
 * is opened as a device whose logical block size is the filesystem's block size (adapters such as
 * xfs-like require them to be equal), so fsck and stat need to be told a block size other than 4096.
 *
 * <p>How a command holds the image ({@link FileBlockDevice}'s lock): mount and mkfs for writing,
 * alone; fsck read-only and stat read-only under an in-memory overlay, sharing the image with other
 * read-only commands. An image holding an emulated zoned device ({@link ZonedDevice}) is opened as
 * one, over the file device, so that a zoned adapter sees its zones.
 */
final class ImageOptions {

    @Option(names = "--adapter", defaultValue = "xfs-like", paramLabel = "NAME",
            description = "the filesystem adapter (default: ${DEFAULT-VALUE})")
    String adapter;

    @Parameters(index = "0", paramLabel = "IMAGE", description = "the image file")
    Path image;

    @Option(names = "--block-size", defaultValue = "4096", paramLabel = "SIZE",
            description = "the filesystem's block size, 512 to 64k (default: ${DEFAULT-VALUE})")
    String blockSize;

    /**
     * @return {@link #blockSize} in bytes
     * @throws UsageException if it is not a size
     */
    int blockSizeBytes() throws UsageException {
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
     * @return the existing image as a device with blocks of {@link #blockSize}, as large as the file,
     *     held for writing: no other device may have it open
     * @throws UsageException if the block size is not one, or the image is not a regular file
     * @throws dev.iomap.device.DeviceBusyException if another device has the image open
     * @throws IOException if the image does not exist or is not a whole number of blocks
     */
    BlockDevice openExisting() throws UsageException, IOException {
        int bytes = checkExisting();
        return zonedIfZoned(FileBlockDevice.open(image, bytes, false));
    }

    /**
     * @return the existing image as {@link #openExisting()} opens it, but read-only: shared with other
     *     read-only devices, refusing every write with {@link dev.iomap.device.ReadOnlyDeviceException}
     * @throws dev.iomap.device.DeviceBusyException if a device for writing has the image open
     */
    BlockDevice openReadOnly() throws UsageException, IOException {
        int bytes = checkExisting();
        return zonedIfZoned(FileBlockDevice.openReadOnly(image, bytes, false));
    }

    /**
     * @return the existing image opened read-only as by {@link #openReadOnly()}, under an
     *     {@link OverlayDevice} that keeps in memory what a mount writes (its mounted flag, a journal
     *     replay), so that a command can mount the image without changing it
     * @throws dev.iomap.device.DeviceBusyException if a device for writing has the image open
     */
    BlockDevice openReadOnlyForMount() throws UsageException, IOException {
        int bytes = checkExisting();
        return zonedIfZoned(new OverlayDevice(FileBlockDevice.openReadOnly(image, bytes, false)));
    }

    /** @return the block size, once the image is known to be an existing regular file */
    private int checkExisting() throws UsageException, IOException {
        int bytes = blockSizeBytes();
        if (!Files.exists(image)) {
            throw new NoSuchFileException(image.toString());
        }
        if (!Files.isRegularFile(image)) {
            throw new UsageException(image + " is not a regular file");
        }
        return bytes;
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
