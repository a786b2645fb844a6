package dev.iomap.cli;

import dev.iomap.device.BlockDevice;
import dev.iomap.devices.FileBlockDevice;
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
     * @return the existing image as a device with blocks of {@link #blockSize}, as large as the file
     * @throws UsageException if the block size is not one, or the image is not a regular file
     * @throws IOException if the image does not exist or is not a whole number of blocks
     */
    BlockDevice openExisting() throws UsageException, IOException {
        int bytes = blockSizeBytes();
        if (!Files.exists(image)) {
            throw new NoSuchFileException(image.toString());
        }
        if (!Files.isRegularFile(image)) {
            throw new UsageException(image + " is not a regular file");
        }
        return FileBlockDevice.open(image, bytes, false);
    }
}
