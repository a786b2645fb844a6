package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NoSpaceException;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * fallocate gives a gfs2-like file blocks written with zeroes (it keeps no unwritten state), a run at a
 * time in writes of up to 1 MiB: with every free block holding another file's old data, the whole
 * fallocated range reads as zeroes, also after a remount.
 */
class FallocateZeroesTest {
    private static final int MIB = 1 << 20;

    @ParameterizedTest(name = "block={0} data={1}")
    @CsvSource({"1024, ordered", "4096, ordered", "4096, journal"})
    void blocksThatHeldOldDataReadAsZeroesAfterAFallocate(int blockSize, String data) throws IOException {
        RamBlockDevice ram = new RamBlockDevice(blockSize, 16L * MIB);
        IomapFileSystems.format("gfs2-like", ram, FormatOptions.blockSize(blockSize));
        MountOptions options = MountOptions.defaults().withAdapterOptions(Map.of("data", data));
        long length = 3L * MIB + 5L * blockSize;
        try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", ram, options)) {
            byte[] old = new byte[MIB];
            Arrays.fill(old, (byte) 0xAB);
            // Every free block gets old data: the filler grows until the device is full.
            try (IomapFile filler = fs.create("/old")) {
                long at = 0;
                try {
                    while (true) {
                        filler.write(at, ByteBuffer.wrap(old));
                        at += MIB;
                    }
                } catch (NoSpaceException full) {
                    filler.fsync();
                }
                assertThat(at).as("old data written").isGreaterThan(8L * MIB);
            }
            fs.unlink("/old");
            fs.sync();
            try (IomapFile file = fs.create("/f")) {
                file.fallocate(FallocateMode.ALLOCATE, 0, length, false);
                file.fsync();
                assertZeroes(file, length);
            }
        }
        try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", ram, options); IomapFile file = fs.open("/f")) {
            assertZeroes(file, length);
        }
    }

    private static void assertZeroes(IomapFile file, long length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(MIB);
        long at = 0;
        while (at < length) {
            buffer.clear();
            int n = file.read(at, buffer);
            assertThat(n).as("read at %d", at).isPositive();
            for (int i = 0; i < n; i++) {
                if (buffer.get(i) != 0) {
                    throw new AssertionError("byte " + (at + i) + " of the fallocated range is " + buffer.get(i));
                }
            }
            at += n;
        }
        assertThat(at).isEqualTo(length);
    }
}
