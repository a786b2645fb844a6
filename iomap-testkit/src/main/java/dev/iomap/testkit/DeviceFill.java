package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.WritebackException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Fills a filesystem with files until it says it is full, for the contracts that need a full device or
 * free blocks that still hold another file's bytes. Files are sized from the mounted file-size limit.
 */
final class DeviceFill {
    private DeviceFill() {
    }

    /** The files a fill created, in order (the last one may hold less than the others). */
    record Files(List<String> paths) {
    }

    /**
     * Writes files {@code prefix} 0, 1, ... of at most {@code perFile} bytes each, in writes of up to
     * {@code chunk} bytes of {@link TestData#pattern} bytes of seed {@code seed} (fsync after each file), until the filesystem says it is full
     * with {@link NoSpaceException}, at the write or (through a {@link WritebackException}) at fsync. With
     * {@code toTheBlock}, the write that ran out is retried one block at a time until a single block no
     * longer fits. Every file is closed when this returns.
     *
     * @param fs the filesystem
     * @param prefix path prefix of the files
     * @param perFile bytes per file, at least one block
     * @param chunk bytes per write
     * @param blockSize the filesystem block size
     * @param seed the pattern's seed
     * @param toTheBlock whether to fill the last blocks one at a time
     * @param limit bytes after which the fill fails the test (the device would have had to say full)
     * @return the files created
     * @throws IOException from create or write other than running out of space
     */
    static Files untilNoSpace(IomapFileSystem fs, String prefix, long perFile, int chunk, int blockSize,
            long seed, boolean toTheBlock, long limit) throws IOException {
        List<String> paths = new ArrayList<>();
        long total = 0;
        int length = chunk;
        while (total < limit) {
            String path = prefix + paths.size();
            IomapFile file;
            try {
                file = fs.create(path);
            } catch (NoSpaceException e) {
                return new Files(paths);
            }
            paths.add(path);
            try (file) {
                long pos = 0;
                while (pos < perFile) {
                    int bytes = (int) Math.min(length, perFile - pos);
                    if (!write(file, pos, bytes, seed)) {
                        if (!toTheBlock || bytes <= blockSize) {
                            return new Files(paths);
                        }
                        length = blockSize;
                        continue;
                    }
                    pos += bytes;
                    total += bytes;
                }
                if (!fsync(file)) {
                    return new Files(paths);
                }
            }
        }
        fail("wrote %d bytes in %d files without the filesystem saying it is full", total, paths.size());
        return null;
    }

    /** @return false if the filesystem had no space for the write (or its write-back) */
    private static boolean write(IomapFile file, long pos, int length, long seed) throws IOException {
        ByteBuffer data = TestData.buffer(seed, pos, length);
        return hadSpace(() -> assertThat(file.write(pos, data)).as("bytes written at %d", pos).isEqualTo(length));
    }

    /** @return false if the filesystem said at fsync that it had no space */
    static boolean fsync(IomapFile file) throws IOException {
        return hadSpace(file::fsync);
    }

    /** A write or an fsync that may find the filesystem full. */
    @FunctionalInterface
    private interface SpaceUse {
        void run() throws IOException;
    }

    /**
     * @return false if {@code use} failed for lack of space, directly or in its write-back (any other
     *     write-back failure fails the test)
     */
    private static boolean hadSpace(SpaceUse use) throws IOException {
        try {
            use.run();
            return true;
        } catch (NoSpaceException e) {
            return false;
        } catch (WritebackException e) {
            assertThat(e.getCause()).as("write-back failure while filling").isInstanceOf(NoSpaceException.class);
            return false;
        }
    }
}
