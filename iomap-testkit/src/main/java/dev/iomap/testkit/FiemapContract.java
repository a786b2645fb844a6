package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileExtent;
import dev.iomap.api.FsStat;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.device.DeviceStats;
import dev.iomap.devices.CountingDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The extent report ({@link IomapFile#fiemap}, {@code FS_IOC_FIEMAP}): extents in file order that never
 * overlap, only the last marked {@code LAST}; every byte of data covered, dirty or written back;
 * written-back extents that point at the file's bytes on the device; preallocated space reported
 * {@code UNWRITTEN} until written; cloned blocks reported {@code SHARED}; the same report after a
 * remount; and asking without sync writes and reserves nothing.
 *
 * <p>Holes are checked only where the filesystem may not fill them: a block never written and never
 * preallocated in a file whose farthest data was written first (see {@link SeekContract} on
 * speculative preallocation) must not be covered by an extent that claims data (one without
 * {@code UNWRITTEN}). With {@link Capability#DENSE_FILES} there are no holes to check: those blocks must
 * be covered instead, and after writeback by written extents (without {@code UNWRITTEN}).
 */
public abstract class FiemapContract extends AdapterContract {

    private void assumeCreatedFiles() {
        assumeTrue(kit().existingFiles() == null, "needs files of its own; this fixture uses existing files");
    }

    /**
     * Asserts the invariants every report has: file order, no overlap, within the range asked for,
     * and {@code LAST} on the last extent only.
     */
    private static List<FileExtent> checked(List<FileExtent> extents, long from, long to, String when) {
        long previousEnd = from;
        for (int i = 0; i < extents.size(); i++) {
            FileExtent extent = extents.get(i);
            assertThat(extent.logical()).as("%s: extent %d %s starts after the previous one", when, i, extent)
                    .isGreaterThanOrEqualTo(previousEnd);
            assertThat(extent.end()).as("%s: extent %d %s ends within the range", when, i, extent)
                    .isLessThanOrEqualTo(to);
            assertThat(extent.has(FileExtent.Flag.LAST)).as("%s: LAST on extent %d of %d: %s", when, i,
                    extents.size(), extents).isEqualTo(i == extents.size() - 1);
            previousEnd = extent.end();
        }
        return extents;
    }

    /** @return whether some extent covers {@code [start, end)} entirely, in pieces or not */
    private static boolean covered(List<FileExtent> extents, long start, long end) {
        long pos = start;
        for (FileExtent extent : extents) {
            if (extent.logical() <= pos && extent.end() > pos) {
                pos = extent.end();
            }
        }
        return pos >= end;
    }

    /** Asserts that no extent claiming data (without {@code UNWRITTEN}) touches {@code [start, end)}. */
    private static void assertNoDataIn(List<FileExtent> extents, long start, long end, String when) {
        for (FileExtent extent : extents) {
            if (!extent.has(FileExtent.Flag.UNWRITTEN) && extent.logical() < end && extent.end() > start) {
                throw new AssertionError(when + ": extent " + extent + " claims data in the hole [" + start + ", "
                        + end + "); report " + extents);
            }
        }
    }

    @Test
    void negativeRangesAreRefused() throws IOException {
        IomapFile file = createdOrExisting();
        assertThatThrownBy(() -> file.fiemap(-1, 10, false)).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> file.fiemap(0, -1, false)).isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void anEmptyFileHasNoExtents() throws IOException {
        assumeCreatedFiles();
        IomapFile file = create("/a");
        assertThat(file.fiemap()).isEmpty();
        assertThat(file.fiemap(0, Long.MAX_VALUE, false)).isEmpty();
    }

    @Test
    void dataIsCoveredWhileDirtyAndAfterWritebackAndHolesAreNot() throws IOException {
        assumeCreatedFiles();
        assumeCapable(Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        long b = blockSize();
        writePattern(file, 9 * b, (int) b, 1);
        writePattern(file, b, 2 * (int) b + 7, 2);
        long size = file.size();
        List<FileExtent> dirty = checked(file.fiemap(0, Long.MAX_VALUE, false), 0, 10 * b, "dirty");
        assertThat(covered(dirty, b, 4 * b)).as("dirty data [b, 4b) covered: %s", dirty).isTrue();
        assertThat(covered(dirty, 9 * b, size)).as("dirty data [9b, EOF) covered: %s", dirty).isTrue();
        assertGaps(dirty, size, "dirty");

        List<FileExtent> synced = checked(file.fiemap(), 0, 10 * b, "after sync");
        assertThat(covered(synced, b, 4 * b)).as("data [b, 4b) covered: %s", synced).isTrue();
        assertThat(covered(synced, 9 * b, size)).as("data [9b, EOF) covered: %s", synced).isTrue();
        assertGaps(synced, size, "after sync");
        for (FileExtent extent : synced) {
            assertThat(extent.has(FileExtent.Flag.DELALLOC)).as("after sync nothing is delayed: %s", synced)
                    .isFalse();
            if (has(Capability.DENSE_FILES)) {
                assertThat(extent.has(FileExtent.Flag.UNWRITTEN)).as("DENSE_FILES: after sync every extent is"
                        + " written: %s", synced).isFalse();
            }
        }
    }

    /**
     * The gaps {@code [0, b)} and {@code [4b, 9b)} of the file above: holes, or with
     * {@link Capability#DENSE_FILES} covered like the rest of the file.
     */
    private void assertGaps(List<FileExtent> extents, long size, String when) {
        long b = blockSize();
        if (has(Capability.DENSE_FILES)) {
            assertThat(covered(extents, 0, size)).as("%s: DENSE_FILES: the whole file [0, %d) covered: %s", when,
                    size, extents).isTrue();
            return;
        }
        assertNoDataIn(extents, 0, b, when);
        assertNoDataIn(extents, 4 * b, 9 * b, when);
    }

    @Test
    void writtenBackExtentsPointAtTheFilesBytesOnTheDevice() throws IOException {
        assumeTrue(!kit().layersTheDevice(), "the fixture's device layer maps addresses: the adapter's device"
                + " addresses are not the kit device's");
        IomapFile file = createdOrExisting();
        long b = blockSize();
        byte[] model = writePattern(file, 0, 5 * (int) b, 3);
        List<FileExtent> extents = checked(file.fiemap(), 0, Math.max(file.size(), 5 * b), "after sync");
        assertThat(covered(extents, 0, 5 * b)).as("the data written covered: %s", extents).isTrue();
        int compared = 0;
        for (FileExtent extent : extents) {
            long end = Math.min(extent.end(), model.length);
            if (extent.has(FileExtent.Flag.DATA_INLINE) || extent.has(FileExtent.Flag.UNWRITTEN)
                    || extent.logical() >= end) {
                continue;
            }
            byte[] onDevice = new byte[(int) (end - extent.logical())];
            device.read(extent.physical(), ByteBuffer.wrap(onDevice));
            byte[] expected = new byte[onDevice.length];
            System.arraycopy(model, (int) extent.logical(), expected, 0, expected.length);
            assertBytes(onDevice, expected, extent.logical());
            compared++;
        }
        assertThat(compared).as("extents compared with the device: %s", extents).isPositive();
    }

    @Test
    void aRangeIsClampedAndItsLastExtentIsMarked() throws IOException {
        assumeCreatedFiles();
        IomapFile file = create("/a");
        long b = blockSize();
        writePattern(file, 0, 6 * (int) b, 4);
        List<FileExtent> middle = checked(file.fiemap(2 * b, b, true), 2 * b, 3 * b, "block 2 only");
        assertThat(middle).as("block 2 only").isNotEmpty();
        assertThat(middle.getFirst().logical()).isEqualTo(2 * b);
        assertThat(middle.getLast().end()).isEqualTo(3 * b);
        List<FileExtent> pastEof = file.fiemap(6 * b, 100 * b, true);
        assertThat(pastEof).as("nothing at or past EOF").isEmpty();
    }

    @Test
    void preallocatedSpaceIsUnwrittenUntilWritten() throws IOException {
        assumeCreatedFiles();
        assumeCapable(Capability.FALLOCATE, Capability.RANDOM_WRITE, Capability.UNWRITTEN_EXTENTS);
        IomapFile file = create("/a");
        long b = blockSize();
        file.fallocate(FallocateMode.ALLOCATE, 0, 8 * b, false);
        List<FileExtent> before = checked(file.fiemap(), 0, 8 * b, "preallocated");
        assertThat(covered(before, 0, 8 * b)).as("preallocation covered: %s", before).isTrue();
        assertNoDataIn(before, 0, 8 * b, "preallocated");
        writePattern(file, 2 * b, (int) b, 5);
        List<FileExtent> after = checked(file.fiemap(), 0, 8 * b, "one block written");
        assertThat(covered(after, 0, 8 * b)).as("preallocation still covered: %s", after).isTrue();
        assertNoDataIn(after, 0, 2 * b, "one block written");
        assertNoDataIn(after, 3 * b, 8 * b, "one block written");
        assertThat(after.stream().filter(e -> e.logical() <= 2 * b && e.end() >= 3 * b)
                .noneMatch(e -> e.has(FileExtent.Flag.UNWRITTEN))).as("block 2 is written: %s", after).isTrue();
    }

    @Test
    void clonedBlocksAreSharedInBothFiles() throws IOException {
        assumeCreatedFiles();
        assumeCapable(Capability.CLONE);
        IomapFile source = create("/a");
        long b = blockSize();
        writePattern(source, 0, 4 * (int) b, 6);
        source.fsync();
        IomapFile copy = create("/b");
        copy.cloneRange(source, 0, 0, 4 * b);
        for (IomapFile file : List.of(source, copy)) {
            List<FileExtent> extents = checked(file.fiemap(), 0, 4 * b, "cloned");
            assertThat(covered(extents, 0, 4 * b)).as("covered: %s", extents).isTrue();
            assertThat(extents).as("every extent shared").allMatch(e -> e.has(FileExtent.Flag.SHARED));
        }
    }

    @Test
    void theReportIsTheSameAfterARemount() throws IOException {
        assumeCreatedFiles();
        assumeCapable(Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        long b = blockSize();
        writePattern(file, 6 * b, (int) b / 2, 7);
        writePattern(file, 0, 2 * (int) b, 8);
        file.fsync();
        List<FileExtent> before = file.fiemap();
        remountChecked();
        assertThat(open("/a").fiemap()).as("after remount").isEqualTo(before);
    }

    @Test
    void askingWithoutSyncWritesNothingAndReservesNothing() throws IOException {
        CountingDevice counting = new CountingDevice(device);
        remountOn(counting);
        IomapFile file = createdOrExisting();
        long b = blockSize();
        writePattern(file, 0, 4 * (int) b, 9);
        if (kit().existingFiles() == null && has(Capability.FALLOCATE)) {
            file.fallocate(FallocateMode.ALLOCATE, file.size(), 4 * b, false);
        }
        FsStat space = fs.statfs();
        DeviceStats traffic = counting.stats();
        List<List<FileExtent>> reports = new ArrayList<>();
        for (long pos = 0; pos < file.size(); pos += b / 2) {
            reports.add(file.fiemap(pos, b, false));
        }
        assertThat(reports).isNotEmpty();
        assertThat(counting.stats()).as("device traffic of the reports").isEqualTo(traffic);
        assertThat(fs.statfs()).as("space after the reports").isEqualTo(space);
    }
}
