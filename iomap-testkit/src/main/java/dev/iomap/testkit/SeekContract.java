package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileStat;
import dev.iomap.api.FsStat;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.NoDataException;
import dev.iomap.device.DeviceStats;
import dev.iomap.devices.CountingDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Seek data and seek hole ({@code lseek(2)} {@code SEEK_DATA}/{@code SEEK_HOLE}): where data and
 * holes are, before and after writeback, over preallocated space, across truncate and remount, and
 * that asking writes and reserves nothing.
 *
 * <p>Holes are expected exactly, at block granularity: a block the file never had data in is a hole,
 * a block with a byte written is data, dirty or not. That holds only where no write ever extended
 * the file past a hole: a filesystem may preallocate past EOF (xfs-like does, speculatively), and a
 * later write further on leaves that space inside the file, where reporting it as data is what
 * {@code lseek} allows. So the tests that need holes write the farthest data first, or make the file
 * large by truncate. Preallocated (unwritten) space is a hole only until something reads it: the
 * kernel counts cached blocks over it as data, even zeroes read from it, so these tests seek before
 * they read.
 *
 * <p>With {@link AdapterFixture#existingFiles()} (an adapter that cannot create files) the tests run
 * on the existing file where they can: the ones that need holes need created files and are skipped.
 * A file whose space is all allocated (a conventional zone) has its only hole at EOF.
 *
 * <p>With {@link Capability#DENSE_FILES} the same tests run and expect what the declaration promises:
 * every offset below EOF is data, at every step (the gap a write past EOF or a truncate up leaves is
 * allocated when it appears), and the only hole is at EOF.
 */
public abstract class SeekContract extends AdapterContract {

    private IomapFile reopen() throws IOException {
        AdapterFixture.ExistingFiles existing = kit().existingFiles();
        return open(existing == null ? "/a" : existing.file());
    }

    private void assumeCreatedFiles() {
        assumeTrue(kit().existingFiles() == null, "needs a file of its own to make holes in; this fixture "
                + "uses existing files");
    }

    /** @return where seek data from {@code pos} lands, or -1 for {@link NoDataException} */
    private static long data(IomapFile file, long pos) throws IOException {
        try {
            long found = file.seekData(pos);
            assertThat(found).as("seek data from %d", pos).isGreaterThanOrEqualTo(pos);
            return found;
        } catch (NoDataException e) {
            return -1;
        }
    }

    /** @return where seek hole from {@code pos} lands, or -1 for {@link NoDataException} */
    private static long hole(IomapFile file, long pos) throws IOException {
        try {
            long found = file.seekHole(pos);
            assertThat(found).as("seek hole from %d", pos).isGreaterThanOrEqualTo(pos);
            return found;
        } catch (NoDataException e) {
            return -1;
        }
    }

    /**
     * Asserts the answers of both seeks from the edges of every block (first byte, second byte, middle,
     * last byte) and around EOF, against the exact layout: data in {@code holedRanges}
     * ({@code {start, end}} pairs, ascending), holes everywhere else; with {@link Capability#DENSE_FILES},
     * data everywhere below EOF instead. A mismatch shows the whole table.
     */
    private void assertLayout(IomapFile file, String when, long[]... holedRanges) throws IOException {
        long size = file.size();
        long block = blockSize();
        long[][] dataRanges = has(Capability.DENSE_FILES) ? new long[][] {range(0, size)} : holedRanges;
        TreeSet<Long> offsets = new TreeSet<>(List.of(size - 1, size, size + 1, size + block));
        for (long start = 0; start <= size; start += block) {
            offsets.addAll(List.of(start, start + 1, start + block / 2, start + block - 1));
        }
        List<String> expected = new ArrayList<>();
        List<String> actual = new ArrayList<>();
        for (long pos : offsets) {
            if (pos < 0) {
                continue;
            }
            expected.add(line(pos, expectedData(pos, size, dataRanges), expectedHole(pos, size, dataRanges)));
            actual.add(line(pos, data(file, pos), hole(file, pos)));
        }
        assertThat(actual).as("seek data and seek hole from each offset %s (size %d, block %d%s)", when, size,
                block, has(Capability.DENSE_FILES) ? ", DENSE_FILES: no holes below EOF" : "").isEqualTo(expected);
    }

    private static String line(long pos, long data, long hole) {
        return "from " + pos + ": data " + (data < 0 ? "ENXIO" : data) + ", hole " + (hole < 0 ? "ENXIO" : hole);
    }

    private static long expectedData(long pos, long size, long[]... ranges) {
        if (pos >= size) {
            return -1;
        }
        for (long[] range : ranges) {
            if (pos < range[1]) {
                return Math.max(pos, range[0]);
            }
        }
        return -1;
    }

    private static long expectedHole(long pos, long size, long[]... ranges) {
        if (pos >= size) {
            return -1;
        }
        for (long[] range : ranges) {
            if (pos >= range[0] && pos < range[1]) {
                return Math.min(range[1], size);
            }
        }
        return pos;
    }

    private static long[] range(long start, long end) {
        return new long[] {start, end};
    }

    @Test
    void anEmptyFileHasNeitherDataNorAHole() throws IOException {
        IomapFile file = createdOrExisting();
        assumeTrue(file.size() == 0, "the existing file is not empty");
        assertThatThrownBy(() -> file.seekData(0)).isInstanceOf(NoDataException.class);
        assertThatThrownBy(() -> file.seekHole(0)).isInstanceOf(NoDataException.class);
        assertThatThrownBy(() -> file.seekData(blockSize())).isInstanceOf(NoDataException.class);
    }

    @Test
    void negativeOffsetsAreRefused() throws IOException {
        IomapFile file = createdOrExisting();
        writePattern(file, 0, 4 * blockSize(), 1);
        assertThatThrownBy(() -> file.seekData(-1)).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> file.seekHole(-1)).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> file.seekHole(Long.MIN_VALUE)).isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void aFileOfDataHasItsOnlyHoleAtEof() throws IOException {
        IomapFile file = createdOrExisting();
        long written = 4L * blockSize();
        writePattern(file, 0, (int) written, 1);
        assertDataUpTo(file, written, "before writeback");
        file.fsync();
        assertDataUpTo(file, written, "after fsync");
        dropCache();
        assertDataUpTo(file, written, "with nothing cached");
        remountChecked();
        assertDataUpTo(reopen(), written, "after remount");
    }

    /** Data from 0 to {@code written}; the first hole at or after it, at most EOF. */
    private void assertDataUpTo(IomapFile file, long written, String when) throws IOException {
        long size = file.size();
        for (long pos : List.of(0L, 1L, (long) blockSize(), written - 1)) {
            assertThat(data(file, pos)).as("seek data from %d %s", pos, when).isEqualTo(pos);
            assertThat(hole(file, pos)).as("seek hole from %d %s (size %d)", pos, when, size)
                    .isBetween(written, size);
        }
    }

    @Test
    void atAndPastEofBothSeeksFindNothing() throws IOException {
        IomapFile file = createdOrExisting();
        boolean created = kit().existingFiles() == null;
        int length = created ? blockSize() + 7 : 4 * blockSize();
        writePattern(file, 0, length, 1);
        long size = file.size();
        assertThat(data(file, size - 1)).isEqualTo(size - 1);
        assertThat(hole(file, size - 1)).as("EOF is a hole").isEqualTo(size);
        for (long pos : List.of(size, size + 1, size + blockSize(), Long.MAX_VALUE)) {
            assertThat(data(file, pos)).as("seek data from %d, size %d", pos, size).isEqualTo(-1);
            assertThat(hole(file, pos)).as("seek hole from %d, size %d", pos, size).isEqualTo(-1);
        }
    }

    @Test
    void dataThenHoleThenDataAtBlockAndByteOffsets() throws IOException {
        assumeCreatedFiles();
        assumeCapable(Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        long b = blockSize();
        byte[] model = apply(new byte[0], 5 * b, writePattern(file, 5 * b, (int) b + 100, 1));
        model = apply(model, 0, writePattern(file, 0, 2 * (int) b, 2));
        long[] head = range(0, 2 * b);
        long[] tail = range(5 * b, 6 * b + 100);
        assertLayout(file, "before writeback", head, tail);
        file.fsync();
        assertLayout(file, "after fsync", head, tail);
        dropCache();
        assertLayout(file, "with nothing cached", head, tail);
        remountChecked();
        IomapFile again = open("/a");
        assertLayout(again, "after remount", head, tail);
        assertContent(again, model);
    }

    @Test
    void dirtyDataOverAHoleIsDataBeforeAndAfterWriteback() throws IOException {
        assumeCreatedFiles();
        assumeCapable(Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        long b = blockSize();
        writePattern(file, 12 * b, 1, 1);
        writePattern(file, 7 * b + 10, 10, 2);
        long[] middle = range(7 * b, 8 * b);
        long[] last = range(12 * b, 12 * b + 1);
        assertLayout(file, "while dirty", middle, last);
        file.fdatasync();
        assertLayout(file, "after fdatasync", middle, last);
        dropCache();
        assertLayout(file, "with nothing cached", middle, last);
    }

    @Test
    void preallocatedSpaceIsAHoleUntilWritten() throws IOException {
        assumeCreatedFiles();
        assumeCapable(Capability.FALLOCATE, Capability.RANDOM_WRITE, Capability.UNWRITTEN_EXTENTS);
        IomapFile file = create("/a");
        long b = blockSize();
        file.fallocate(FallocateMode.ALLOCATE, 0, 8 * b, false);
        assertThat(file.size()).isEqualTo(8 * b);
        assertLayout(file, "preallocated, nothing written");
        writePattern(file, 2 * b, (int) b, 1);
        long[] written = range(2 * b, 3 * b);
        assertLayout(file, "one block written, dirty", written);
        file.fsync();
        assertLayout(file, "after fsync", written);
        dropCache();
        assertLayout(file, "with nothing cached", written);
    }

    @Test
    void preallocationWithoutUnwrittenExtentsIsZeroedData() throws IOException {
        assumeCreatedFiles();
        assumeCapable(Capability.FALLOCATE, Capability.RANDOM_WRITE);
        org.junit.jupiter.api.Assumptions.assumeFalse(has(Capability.UNWRITTEN_EXTENTS),
                "UNWRITTEN_EXTENTS is declared: preallocated space is a hole until written (tested above)");
        IomapFile file = create("/a");
        long b = blockSize();
        file.fallocate(FallocateMode.ALLOCATE, 0, 8 * b, false);
        long[] all = range(0, 8 * b);
        assertLayout(file, "preallocated, nothing written", all);
        byte[] model = new byte[(int) (8 * b)];
        model = apply(model, 5 * b + 100, writePattern(file, 5 * b + 100, 100, 1));
        assertLayout(file, "a sub-block write, dirty", all);
        file.fsync();
        dropCache();
        assertLayout(file, "after fsync, nothing cached", all);
        assertContent(file, model);
        remountChecked();
        IomapFile again = open("/a");
        assertLayout(again, "after remount", all);
        assertContent(again, model);
    }

    @Test
    void aPartlyWrittenPreallocationIsDataOnlyInTheBlocksWritten() throws IOException {
        assumeCreatedFiles();
        assumeCapable(Capability.FALLOCATE, Capability.RANDOM_WRITE, Capability.UNWRITTEN_EXTENTS);
        IomapFile file = create("/a");
        long b = blockSize();
        file.fallocate(FallocateMode.ALLOCATE, 0, 8 * b, false);
        byte[] model = new byte[(int) (8 * b)];
        model = apply(model, 5 * b + 100, writePattern(file, 5 * b + 100, 100, 1));
        model = apply(model, b - 10, writePattern(file, b - 10, 20, 2));
        long[] first = range(0, 2 * b);
        long[] second = range(5 * b, 6 * b);
        assertLayout(file, "sub-block writes, dirty", first, second);
        file.fsync();
        dropCache();
        assertLayout(file, "after fsync, nothing cached", first, second);
        remountChecked();
        IomapFile again = open("/a");
        assertLayout(again, "after remount", first, second);
        assertContent(again, model);
    }

    @Test
    void truncateDownThenUpLeavesAHoleAfterTheLastBlockKept() throws IOException {
        assumeCreatedFiles();
        assumeCapable(Capability.TRUNCATE);
        IomapFile file = create("/a");
        long b = blockSize();
        writePattern(file, 0, 3 * (int) b, 1);
        file.truncate(b + 100);
        file.truncate(6 * b);
        long[] kept = range(0, 2 * b);
        assertLayout(file, "after truncate down and up", kept);
        file.fsync();
        dropCache();
        assertLayout(file, "after fsync, nothing cached", kept);
        file.truncate(0);
        assertThatThrownBy(() -> file.seekHole(0)).as("empty again").isInstanceOf(NoDataException.class);
        file.truncate(4 * b);
        assertLayout(file, "after truncate to 0 and up");
        remountChecked();
        assertLayout(open("/a"), "after remount");
    }

    @Test
    void seeksWriteNothingAndReserveNothing() throws IOException {
        CountingDevice counting = new CountingDevice(device);
        remountOn(counting);
        IomapFile file = createdOrExisting();
        long b = blockSize();
        writePattern(file, 0, 4 * (int) b, 1);
        boolean created = kit().existingFiles() == null;
        if (created && has(Capability.RANDOM_WRITE)) {
            writePattern(file, 9 * b + 1, 10, 2);
        }
        if (created && has(Capability.FALLOCATE)) {
            file.fallocate(FallocateMode.ALLOCATE, file.size(), 4 * b, false);
        }
        FsStat space = fs.statfs();
        FileStat stat = file.stat();
        DeviceStats traffic = counting.stats();
        long size = file.size();
        for (long pos = 0; pos < size; pos += b / 2) {
            data(file, pos);
            hole(file, pos);
        }
        assertThat(counting.stats()).as("device traffic of the seeks").isEqualTo(traffic);
        assertThat(fs.statfs()).as("free space after the seeks").isEqualTo(space);
        assertThat(file.stat()).as("the file's attributes after the seeks").isEqualTo(stat);
        assertThat(data(file, 0)).isZero();
        assertThat(hole(file, 0)).isBetween(4 * b, size);
    }
}
