package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FileExtent;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * FITRIM ({@code fstrim}, XFS's {@code xfs_ioc_trim}): the free space on the device is discarded and
 * nothing else: a live file's blocks keep their data. Space freed by a transaction not yet durable is
 * made durably free first (XFS forces its log), so a file deleted just before is discarded too and a
 * crash cannot give its blocks back to it.
 */
class TrimTest {
    private static final int MIB = 1 << 20;

    private static List<FileExtent> extents(XfsFixture fx, String path) throws IOException {
        try (IomapFile file = fx.fs.open(path)) {
            return file.fiemap(0, Long.MAX_VALUE, true);
        }
    }

    private static byte[] onDevice(XfsFixture fx, FileExtent extent) throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate((int) extent.length());
        fx.device.read(extent.physical(), bytes);
        return bytes.array();
    }

    @Test
    void freeSpaceIsDiscardedAfterTheRunningTransactionCommitsAndLiveBlocksKeepTheirData() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.write("/live", pattern(1, 0, MIB)).close();
            fx.write("/deleted", pattern(2, 0, MIB)).close();
            fx.write("/busy", pattern(3, 0, MIB)).close();
            fx.fs.sync();
            List<FileExtent> live = extents(fx, "/live");
            List<FileExtent> deleted = extents(fx, "/deleted");
            List<FileExtent> busy = extents(fx, "/busy");
            fx.fs.unlink("/deleted");
            fx.fs.sync();
            fx.fs.unlink("/busy");   // freed by the running transaction only: trim commits it first

            long discardedBefore = fx.device.stats().discardedBytes();
            long trimmed = fx.fs.trim(0, Long.MAX_VALUE, 0);

            assertThat(fx.device.stats().discardedBytes() - discardedBefore).isEqualTo(trimmed);
            assertThat(trimmed).as("at least the deleted file's blocks").isGreaterThanOrEqualTo(MIB);
            for (FileExtent e : deleted) {
                assertThat(onDevice(fx, e)).as("discarded").isEqualTo(new byte[(int) e.length()]);
            }
            for (FileExtent e : live) {
                assertThat(onDevice(fx, e)).isEqualTo(pattern(1, e.logical(), (int) e.length()));
            }
            for (FileExtent e : busy) {
                assertThat(onDevice(fx, e)).as("freed just before: committed, then discarded")
                        .isEqualTo(new byte[(int) e.length()]);
            }
            assertThat(trimmed).isGreaterThanOrEqualTo(2L * MIB);
            fx.remount();
            assertThat(fx.readFile("/live")).isEqualTo(pattern(1, 0, MIB));
            assertThat(fx.fs.readdir("/")).extracting(e -> e.name()).containsExactly("live");
        }
    }

    @Test
    void aRangeAndAMinimumLengthLimitWhatIsDiscarded() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            long total = fx.fs.statfs().totalBlocks() * XfsFixture.BLOCK;
            long everything = fx.fs.trim(0, Long.MAX_VALUE, 0);
            assertThat(everything).isPositive();
            long firstHalf = fx.fs.trim(0, total / 2, 0);
            long secondHalf = fx.fs.trim(total / 2, total - total / 2, 0);
            assertThat(firstHalf + secondHalf).isEqualTo(everything);
            assertThat(fx.fs.trim(0, Long.MAX_VALUE, total)).as("no free extent that long").isZero();

            assertThatThrownBy(() -> fx.fs.trim(total, XfsFixture.BLOCK, 0)).isInstanceOf(InvalidRangeException.class)
                    .hasMessageContaining("inside the");
            assertThatThrownBy(() -> fx.fs.trim(0, XfsFixture.BLOCK - 1, 0)).isInstanceOf(InvalidRangeException.class);
            assertThatThrownBy(() -> fx.fs.trim(-1, XfsFixture.BLOCK, 0)).isInstanceOf(InvalidRangeException.class);
        }
    }
}
