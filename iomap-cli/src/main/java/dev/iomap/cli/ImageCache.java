package dev.iomap.cli;

import dev.iomap.api.NotSupportedException;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * How the commands open an image file: {@link #NONE}, the default, bypasses the host's page cache
 * ({@code O_DIRECT}), the way virtual machine monitors open disk images with {@code cache=none}, so
 * every byte is cached once (in iomap4j's page cache) and written once; {@link #HOST} reads and
 * writes through the host's page cache, as the commands did before (each byte then cached twice and
 * written back by the host too). {@link #NONE} applies to images whose block size is a multiple of the
 * host filesystem's block size ({@code O_DIRECT}'s alignment as {@link FileBlockDevice} takes it); an
 * image of smaller blocks (512 bytes or 1 KiB on a 4 KiB ext4) is opened buffered, without a word, as
 * with {@link #HOST}. Where the host filesystem refuses {@code O_DIRECT} for an image it would apply
 * to, {@link #NONE} falls back to {@link #HOST} and says so in one line.
 */
public enum ImageCache {
    /** {@code O_DIRECT}: the host's page cache is bypassed; buffered where the host refuses it. */
    NONE,
    /** Buffered: through the host's page cache. */
    HOST;

    /** Opens a file device one way or the other. */
    @FunctionalInterface
    public interface Opener {
        /**
         * @param directIo whether to open with {@code O_DIRECT}
         * @return the open device
         * @throws NotSupportedException if {@code directIo} and the host refuses it
         * @throws IOException if the file cannot be opened
         */
        FileBlockDevice open(boolean directIo) throws IOException;
    }

    /**
     * @param text {@code none} or {@code host}, in any case
     * @return the mode
     * @throws UsageException if it is neither
     */
    public static ImageCache parse(String text) throws UsageException {
        return switch (text.toLowerCase(Locale.ROOT)) {
            case "none" -> NONE;
            case "host" -> HOST;
            default -> throw new UsageException("bad cache mode '" + text + "': use none (O_DIRECT, the default)"
                    + " or host (through the host's page cache)");
        };
    }

    /**
     * Opens {@code image} this way: {@link #HOST} buffered; {@link #NONE} with {@code O_DIRECT} if
     * {@code blockSize} is a multiple of the host filesystem's block size (else buffered), or, if the
     * host refuses that ({@link NotSupportedException}), buffered after telling {@code notices} in one
     * line why.
     *
     * @param image the image (which need not exist yet: then its directory's filesystem counts)
     * @param blockSize the device's block size
     * @param opener opens the device
     * @param notices where the fallback line goes
     * @return the open device, which the caller closes
     * @throws IOException if the image cannot be opened either way
     */
    public FileBlockDevice open(Path image, int blockSize, Opener opener, Consumer<String> notices)
            throws IOException {
        if (this == HOST || blockSize % hostBlockSize(image) != 0) {
            return opener.open(false);
        }
        try {
            return opener.open(true);
        } catch (NotSupportedException e) {
            notices.accept("iomap: " + image + ": O_DIRECT refused (" + e.getMessage()
                    + "); using buffered I/O through the host's page cache instead (cache=host)");
            return opener.open(false);
        }
    }

    /**
     * @param image a file, or a path whose parent directory exists
     * @return the block size of the filesystem holding it (at least 512; 512 if it cannot be told)
     */
    static long hostBlockSize(Path image) {
        Path probe = Files.exists(image) ? image : image.toAbsolutePath().getParent();
        if (probe == null) {
            return 512;
        }
        try {
            return Math.max(512, Files.getFileStore(probe).getBlockSize());
        } catch (IOException | UnsupportedOperationException e) {
            return 512;
        }
    }

    /** @return {@code none} or {@code host}, as parsed */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
