package dev.iomap.adapter.bcachefs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FileExtent;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * FITRIM ({@code fstrim}): the durably free space on the device is discarded and nothing else. A
 * live file's blocks, and blocks a reflinked file still shares after the other sharer is deleted, keep
 * their data. Blocks freed by a transaction not yet durable are made durably free first (the journal is
 * flushed, as bcachefs discards a bucket only once the journal entry that freed it is on the device), so
 * a file deleted just before is discarded too and a crash cannot give its blocks back to it.
 */
class TrimTest {
    private static final int BLOCK = 4096;
    private static final int MIB = 1 << 20;

    private static RamBlockDevice formatted() throws IOException {
        RamBlockDevice device = new RamBlockDevice(BLOCK, 32L << 20);
        Images.format(device, Map.of());
        return device;
    }

    private static void write(IomapFileSystem fs, String path, int seed, int length) throws IOException {
        try (IomapFile file = fs.create(path)) {
            file.write(0, ByteBuffer.wrap(pattern(seed, 0, length)));
        }
    }

    private static byte[] read(IomapFileSystem fs, String path, int length) throws IOException {
        try (IomapFile file = fs.open(path)) {
            ByteBuffer back = ByteBuffer.allocate(length);
            file.read(0, back);
            return back.array();
        }
    }

    private static List<FileExtent> extents(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            return file.fiemap(0, Long.MAX_VALUE, true);
        }
    }

    private static byte[] onDevice(RamBlockDevice device, FileExtent extent) throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate((int) extent.length());
        device.read(extent.physical(), bytes);
        return bytes.array();
    }

    private static void assertKept(RamBlockDevice device, List<FileExtent> extents, int seed) throws IOException {
        for (FileExtent e : extents) {
            assertThat(onDevice(device, e)).as("kept: %s", e).isEqualTo(pattern(seed, e.logical(), (int) e.length()));
        }
    }

    private static void assertDiscarded(RamBlockDevice device, List<FileExtent> extents) throws IOException {
        for (FileExtent e : extents) {
            assertThat(onDevice(device, e)).as("discarded: %s", e).isEqualTo(new byte[(int) e.length()]);
        }
    }

    @Test
    void freeSpaceIsDiscardedAfterTheJournalFlushAndLiveBlocksKeepTheirData() throws Exception {
        RamBlockDevice device = formatted();
        try (IomapFileSystem fs = Images.mount(device)) {
            write(fs, "/live", 1, MIB);
            write(fs, "/deleted", 2, MIB);
            write(fs, "/busy", 3, MIB);
            fs.sync();
            List<FileExtent> live = extents(fs, "/live");
            List<FileExtent> deleted = extents(fs, "/deleted");
            List<FileExtent> busy = extents(fs, "/busy");
            fs.unlink("/deleted");
            fs.sync();
            fs.unlink("/busy"); // freed by a transaction not yet durable: trim flushes the journal first

            long discardedBefore = device.stats().discardedBytes();
            long trimmed = fs.trim(0, Long.MAX_VALUE, 0);

            assertThat(device.stats().discardedBytes() - discardedBefore).isEqualTo(trimmed);
            assertThat(trimmed).as("at least both deleted files").isGreaterThanOrEqualTo(2L * MIB);
            assertThat(fs.stats().adapterCounter("trimmed_bytes")).isEqualTo(trimmed);
            assertDiscarded(device, deleted);
            assertDiscarded(device, busy);
            assertKept(device, live, 1);
        }
        try (IomapFileSystem fs = Images.mount(device)) {
            assertThat(read(fs, "/live", MIB)).isEqualTo(pattern(1, 0, MIB));
            assertThat(fs.readdir("/")).extracting(e -> e.name()).containsExactly("live");
        }
        assertThat(Images.ADAPTER.fsck(device, true).problems()).isEmpty();
    }

    @Test
    void blocksAReflinkedFileStillSharesAreKeptWhenTheOtherSharerIsDeleted() throws Exception {
        RamBlockDevice device = formatted();
        List<FileExtent> shared;
        try (IomapFileSystem fs = Images.mount(device)) {
            write(fs, "/a", 4, MIB);
            try (IomapFile a = fs.open("/a"); IomapFile b = fs.create("/b")) {
                b.cloneRange(a, 0, 0, MIB);
            }
            fs.sync();
            shared = extents(fs, "/b");
            assertThat(placement(shared)).as("the clone shares /a's blocks").isEqualTo(placement(extents(fs, "/a")));
            fs.unlink("/a");

            long discardedBefore = device.stats().discardedBytes();
            long trimmed = fs.trim(0, Long.MAX_VALUE, 0);

            assertThat(device.stats().discardedBytes() - discardedBefore).isEqualTo(trimmed);
            assertThat(trimmed).isPositive();
            assertKept(device, shared, 4);
        }
        try (IomapFileSystem fs = Images.mount(device)) {
            assertThat(read(fs, "/b", MIB)).as("read back and verified against its checksums")
                    .isEqualTo(pattern(4, 0, MIB));
        }
        assertThat(Images.ADAPTER.fsck(device, true).problems()).isEmpty();
    }

    /** @return where each extent lies: logical offset, physical offset and length */
    private static List<List<Long>> placement(List<FileExtent> extents) {
        return extents.stream().map(e -> List.of(e.logical(), e.physical(), e.length())).toList();
    }

    @Test
    void aRangeAndAMinimumLengthLimitWhatIsDiscarded() throws Exception {
        RamBlockDevice device = formatted();
        try (IomapFileSystem fs = Images.mount(device)) {
            long total = device.capacity();
            long everything = fs.trim(0, Long.MAX_VALUE, 0);
            assertThat(everything).isPositive().isLessThanOrEqualTo(fs.statfs().totalBlocks() * BLOCK);
            long firstHalf = fs.trim(0, total / 2, 0);
            long secondHalf = fs.trim(total / 2, total - total / 2, 0);
            assertThat(firstHalf).isPositive();
            assertThat(secondHalf).isPositive();
            assertThat(firstHalf + secondHalf).isEqualTo(everything);
            assertThat(fs.trim(total - BLOCK, Long.MAX_VALUE, 0)).as("the last block, free").isEqualTo(BLOCK);
            assertThat(fs.trim(0, Long.MAX_VALUE, 1)).as("a minimum of one byte is one block").isEqualTo(everything);
            assertThat(fs.trim(0, Long.MAX_VALUE, BLOCK + 1)).as("runs of two blocks or more")
                    .isPositive().isLessThanOrEqualTo(everything);
            assertThat(fs.trim(0, Long.MAX_VALUE, total)).as("no free run that long").isZero();

            assertThatThrownBy(() -> fs.trim(total, BLOCK, 0)).isInstanceOf(InvalidRangeException.class)
                    .hasMessageContaining("inside the");
            assertThatThrownBy(() -> fs.trim(0, BLOCK - 1, 0)).isInstanceOf(InvalidRangeException.class);
            assertThatThrownBy(() -> fs.trim(-1, BLOCK, 0)).isInstanceOf(InvalidRangeException.class);
            assertThatThrownBy(() -> fs.trim(0, BLOCK, -1)).isInstanceOf(InvalidRangeException.class);
        }
    }
}
