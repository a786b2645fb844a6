package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsStat;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NoSpaceException;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Space freed by an unlink or a truncate is usable at once (issue 36, item 10): on a filesystem filled
 * to ENOSPC a file is truncated and written again, and after the removal of the filling file new files
 * are created and written and an existing file is overwritten in full, without a remount, and the
 * image is clean.
 */
class FreedSpaceTest {
    private static final int BLOCK = 4096;
    private static final int MIB = 1 << 20;

    @ParameterizedTest(name = "data={0}")
    @ValueSource(strings = {"ordered", "journal"})
    void spaceFreedAfterAFillToEnospcIsUsableAtOnce(String data) throws IOException {
        RamBlockDevice ram = new RamBlockDevice(BLOCK, 32L * MIB);
        IomapFileSystems.format("gfs2-like", ram, FormatOptions.blockSize(BLOCK));
        MountOptions options = MountOptions.defaults().withAdapterOptions(java.util.Map.of("data", data));
        try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", ram, options)) {
            try (IomapFile kept = fs.create("/kept")) {
                write(kept, 0, chunk(1, 4 * MIB));
            }
            long filled = fill(fs, "/fill");
            assertThat(filled).as("bytes the fill wrote").isGreaterThan(8L * MIB);
            try (IomapFile kept = fs.open("/kept")) {
                // A rewrite on the full filesystem (dd without conv=notrunc): the truncate frees what it writes into.
                kept.truncate(0);
                write(kept, 0, chunk(8, 4 * MIB));
                kept.fsync();
            }
            fs.unlink("/fill");
            FsStat stat = fs.statfs();
            assertThat(stat.freeBlocks() * BLOCK).as("free bytes after the unlink").isGreaterThan(8L * MIB);

            for (int i = 0; i < 4; i++) {
                try (IomapFile file = fs.create("/new" + i)) {
                    write(file, 0, chunk(2 + i, MIB));
                }
            }
            try (IomapFile kept = fs.open("/kept")) {
                write(kept, 0, chunk(9, 4 * MIB));
                kept.fsync();
            }
        }
        assertThat(IomapFileSystems.fsck("gfs2-like", ram).problems()).isEmpty();
    }

    /** Writes 1 MiB at a time (each fsync'd) until ENOSPC; returns the bytes written. */
    private static long fill(IomapFileSystem fs, String path) throws IOException {
        long at = 0;
        try (IomapFile file = fs.create(path)) {
            byte[] bytes = chunk(7, MIB);
            try {
                while (true) {
                    write(file, at, bytes);
                    file.fsync();
                    at += bytes.length;
                }
            } catch (NoSpaceException full) {
                return at;
            }
        }
    }

    private static void write(IomapFile file, long at, byte[] bytes) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
            file.write(at + buffer.position(), buffer);
        }
    }

    private static byte[] chunk(int seed, int length) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, (byte) seed);
        return bytes;
    }
}
