package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NoSpaceException;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 36 item 11: after {@code rm} of a file that filled the device, statfs showed the device full
 * until another file's fsync or a remount. Blocks an unlink frees become allocatable once the
 * transaction that freed them is durable (a crash must not replay a tree pointing at reused blocks), but
 * they are free space already, as bcachefs accounts them at commit: statfs counts them, and a write
 * that needs them flushes the journal to get them.
 */
class FreedSpaceTest {

    @Test
    void spaceAnUnlinkFreesShowsInStatfsAtOnceAndAWriteCanUseIt() throws IOException {
        int bs = 4096;
        RamBlockDevice device = new RamBlockDevice(bs, 8L << 20);
        Images.format(device, Map.of());
        try (IomapFileSystem fs = Images.mount(device)) {
            long freeBefore = fs.statfs().freeBlocks();
            long written = fill(fs, "/fill", bs);
            assertThat(fs.statfs().freeBlocks()).as("free blocks when full").isLessThan(16);

            fs.unlink("/fill");

            long freeAfter = fs.statfs().freeBlocks();
            assertThat(freeAfter).as("free blocks right after rm of a file of %d blocks (%d free before it)",
                    written / bs, freeBefore).isGreaterThanOrEqualTo(freeBefore - 16);
            try (IomapFile again = fs.create("/again")) {
                int length = (int) (written / 2);
                again.write(0, TestData.buffer(2, 0, length));
                again.fsync();
            }
        }
        assertThat(Images.ADAPTER.fsck(device).problems()).isEmpty();
    }

    /** Writes {@code path} until ENOSPC and fsyncs it. @return its size */
    private static long fill(IomapFileSystem fs, String path, int bs) throws IOException {
        try (IomapFile f = fs.create(path)) {
            int chunk = 64 * bs;
            try {
                while (true) {
                    ByteBuffer src = TestData.buffer(1, f.size(), chunk);
                    f.write(f.size(), src);
                }
            } catch (NoSpaceException expected) {
                // full
            }
            f.fsync();
            return f.size();
        }
    }
}
