package dev.iomap.adapter.gfs2;

import static dev.iomap.adapter.gfs2.Nodes.readAll;
import static dev.iomap.adapter.gfs2.Nodes.write;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.lock.InProcessCluster;
import dev.iomap.api.FileExtent;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * FITRIM ({@code fstrim}, GFS2's {@code gfs2_fitrim}): the free space on the device is discarded and
 * nothing else: a live file's blocks keep their data, also blocks allocated by a transaction not yet
 * committed. Space freed by a transaction not yet durable is made durably free first (the running
 * transaction is committed), so a file deleted just before is discarded too. On a cluster, a trim on one
 * node holds each resource group's glock, so it never discards blocks another node allocated.
 */
class TrimTest {
    private static final int BLOCK = 4096;
    private static final int MIB = 1 << 20;
    /** The core's flusher off: device traffic only when the test asks. */
    private static final PageCacheOptions CACHE = PageCacheOptions.defaults();

    private static IomapFileSystem mount(BlockDevice device, String data) throws IOException {
        return IomapFileSystems.mount("gfs2-like", device,
                new MountOptions(CACHE, false).withAdapterOptions(Map.of("data", data)));
    }

    private static RamBlockDevice formatted(long bytes) throws IOException {
        RamBlockDevice ram = new RamBlockDevice(BLOCK, bytes);
        IomapFileSystems.format("gfs2-like", ram, FormatOptions.blockSize(BLOCK));
        return ram;
    }

    private static void create(IomapFileSystem fs, String path, int seed, int length) throws IOException {
        try (IomapFile file = fs.create(path)) {
            write(file, 0, pattern(seed, 0, length));
        }
    }

    private static List<FileExtent> extents(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            return file.fiemap(0, Long.MAX_VALUE, true);
        }
    }

    private static byte[] onDevice(BlockDevice device, FileExtent extent) throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate((int) extent.length());
        device.read(extent.physical(), bytes);
        return bytes.array();
    }

    private static void assertZeroes(BlockDevice device, List<FileExtent> extents, String what) throws IOException {
        assertThat(extents).as(what + ": extents").isNotEmpty();
        for (FileExtent e : extents) {
            assertThat(Arrays.mismatch(onDevice(device, e), new byte[(int) e.length()]))
                    .as(what + " at " + e.physical() + ": first byte not zero").isEqualTo(-1);
        }
    }

    private static void assertPattern(BlockDevice device, List<FileExtent> extents, int seed, String what)
            throws IOException {
        assertThat(extents).as(what + ": extents").isNotEmpty();
        for (FileExtent e : extents) {
            assertThat(Arrays.mismatch(onDevice(device, e), pattern(seed, e.logical(), (int) e.length())))
                    .as(what + " at " + e.physical() + ": first differing byte").isEqualTo(-1);
        }
    }

    @ParameterizedTest(name = "data={0}")
    @ValueSource(strings = {"ordered", "journal"})
    void freeSpaceIsDiscardedAfterTheRunningTransactionCommitsAndLiveBlocksKeepTheirData(String data)
            throws IOException {
        RamBlockDevice ram = formatted(64L * MIB);
        try (IomapFileSystem fs = mount(ram, data)) {
            create(fs, "/live", 1, MIB);
            create(fs, "/deleted", 2, MIB);
            create(fs, "/busy", 3, MIB);
            fs.sync();
            List<FileExtent> live = extents(fs, "/live");
            List<FileExtent> deleted = extents(fs, "/deleted");
            List<FileExtent> busy = extents(fs, "/busy");
            fs.unlink("/deleted");
            fs.sync();
            fs.unlink("/busy");   // freed by the running transaction only: trim commits it first

            long discardedBefore = ram.stats().discardedBytes();
            long trimmed = fs.trim(0, Long.MAX_VALUE, 0);

            assertThat(ram.stats().discardedBytes() - discardedBefore).isEqualTo(trimmed);
            assertThat(fs.stats().adapterCounters()).containsEntry("trim.bytes", trimmed);
            assertThat(trimmed).as("at least the two deleted files' blocks").isGreaterThanOrEqualTo(2L * MIB);
            assertZeroes(ram, deleted, "deleted, committed");
            assertZeroes(ram, busy, "freed just before: committed, then discarded");
            assertPattern(ram, live, 1, "live");
        }
        try (IomapFileSystem fs = mount(ram, data)) {
            assertThat(readAll(fs, "/live")).isEqualTo(pattern(1, 0, MIB));
            assertThat(fs.readdir("/")).extracting(e -> e.name()).containsExactly("live");
        }
        assertThat(IomapFileSystems.fsck("gfs2-like", ram).problems()).isEmpty();
    }

    @ParameterizedTest(name = "data={0}")
    @ValueSource(strings = {"ordered", "journal"})
    void blocksAllocatedByTheRunningTransactionAreKeptThoughTheDeviceStillHasThemFree(String data)
            throws IOException {
        RamBlockDevice ram = formatted(16L * MIB);
        try (IomapFileSystem fs = mount(ram, data)) {
            create(fs, "/old", 1, 4 * MIB);
            fs.sync();
            fs.unlink("/old");
            fs.sync();   // its blocks are durably free: the next file may get them
            create(fs, "/new", 2, 4 * MIB);
            List<FileExtent> fresh = extents(fs, "/new");   // written, allocated by the running transaction

            long trimmed = fs.trim(0, Long.MAX_VALUE, 0);

            assertThat(trimmed).isPositive();
            assertPattern(ram, fresh, 2, "allocated by the running transaction");
            assertThat(readAll(fs, "/new")).isEqualTo(pattern(2, 0, 4 * MIB));
        }
        try (IomapFileSystem fs = mount(ram, data)) {
            assertThat(readAll(fs, "/new")).isEqualTo(pattern(2, 0, 4 * MIB));
        }
        assertThat(IomapFileSystems.fsck("gfs2-like", ram).problems()).isEmpty();
    }

    @Test
    void aRangeAndAMinimumLengthLimitWhatIsDiscarded() throws IOException {
        RamBlockDevice ram = formatted(64L * MIB);
        try (IomapFileSystem fs = mount(ram, "ordered")) {
            create(fs, "/a", 1, MIB);
            fs.sync();
            long total = fs.statfs().totalBlocks() * BLOCK;
            long everything = fs.trim(0, Long.MAX_VALUE, 0);
            assertThat(everything).isPositive();
            long firstHalf = fs.trim(0, total / 2, 0);
            long secondHalf = fs.trim(total / 2, total - total / 2, 0);
            assertThat(firstHalf + secondHalf).isEqualTo(everything);
            assertThat(fs.trim(0, Long.MAX_VALUE, total)).as("no free extent that long").isZero();
            assertThat(fs.trim(0, Long.MAX_VALUE, MIB)).as("only runs of 256 blocks or more")
                    .isPositive().isLessThanOrEqualTo(everything);

            assertThatThrownBy(() -> fs.trim(total, BLOCK, 0)).isInstanceOf(InvalidRangeException.class)
                    .hasMessageContaining("inside the");
            assertThatThrownBy(() -> fs.trim(0, BLOCK - 1, 0)).isInstanceOf(InvalidRangeException.class);
            assertThatThrownBy(() -> fs.trim(-1, BLOCK, 0)).isInstanceOf(InvalidRangeException.class);
            assertThatThrownBy(() -> fs.trim(0, BLOCK, -1)).isInstanceOf(InvalidRangeException.class);
            assertThat(readAll(fs, "/a")).isEqualTo(pattern(1, 0, MIB));
        }
        assertThat(IomapFileSystems.fsck("gfs2-like", ram).problems()).isEmpty();
    }

    @Test
    void aReadOnlyDeviceRefusesATrimThatWouldDiscardNothing() throws IOException {
        RamBlockDevice ram = formatted(16L * MIB);
        ReadOnly device = new ReadOnly(ram);
        try (IomapFileSystem fs = mount(device, "ordered")) {
            long total = fs.statfs().totalBlocks() * BLOCK;
            device.readOnly = true;
            try {
                assertThatThrownBy(() -> fs.trim(0, Long.MAX_VALUE, total))
                        .isInstanceOf(ReadOnlyDeviceException.class);
                assertThatThrownBy(() -> fs.trim(0, Long.MAX_VALUE, 0)).isInstanceOf(ReadOnlyDeviceException.class);
                assertThatThrownBy(() -> fs.trim(0, BLOCK - 1, 0)).as("the range is checked first")
                        .isInstanceOf(InvalidRangeException.class);
            } finally {
                device.readOnly = false;
            }
        }
        assertThat(ram.stats().discardedBytes()).isZero();
    }

    @Test
    void aTrimOnOneNodeKeepsTheBlocksAnotherNodeAllocatedAndDiscardsWhatItFreed() throws IOException {
        try (Nodes nodes = new Nodes(new InProcessCluster(), 3, 32)) {
            IomapFileSystem a = nodes.mount();
            IomapFileSystem b = nodes.mount();
            create(b, "/gone", 5, MIB);
            b.sync();
            List<FileExtent> gone = extents(b, "/gone");
            // Written back (fiemap syncs the file) but allocated in B's running transaction only: on the
            // device its blocks are still free until B commits, which giving up the group's glock makes it do.
            create(b, "/kept", 6, MIB);
            List<FileExtent> kept = extents(b, "/kept");
            b.unlink("/gone");   // freed in B's running transaction

            long discardedBefore = nodes.device.stats().discardedBytes();
            long trimmed = a.trim(0, Long.MAX_VALUE, 0);

            assertThat(nodes.device.stats().discardedBytes() - discardedBefore).isEqualTo(trimmed);
            assertPattern(nodes.device, kept, 6, "B's unsynced file");
            assertZeroes(nodes.device, gone, "B's deleted file");
            assertThat(readAll(a, "/kept")).isEqualTo(pattern(6, 0, MIB));
            assertThat(readAll(b, "/kept")).isEqualTo(pattern(6, 0, MIB));
            MultiNodeCoherenceTest.assertCleanAfterUnmount(nodes);
        }
    }

    /**
     * A device made read-only while mounted, as a {@code ro} mount opens it: writes and discards refused
     * while {@link #readOnly} is set. (gfs2-like's mount writes its journal's superblock at replay, so it
     * cannot start on a read-only device.)
     */
    private static final class ReadOnly extends ForwardingBlockDevice {
        volatile boolean readOnly;

        ReadOnly(BlockDevice below) {
            super(below);
        }

        @Override
        public boolean readOnly() {
            return readOnly;
        }

        @Override
        public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
            return readOnly ? CompletableFuture.failedFuture(new ReadOnlyDeviceException("read-only"))
                    : super.write(offset, srcs, purpose);
        }

        @Override
        public void discard(long offset, long length) throws IOException {
            if (readOnly) {
                throw new ReadOnlyDeviceException("read-only");
            }
            super.discard(offset, length);
        }

        @Override
        public void close() {
        }
    }
}
