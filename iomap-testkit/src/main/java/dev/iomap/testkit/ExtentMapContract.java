package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import dev.iomap.api.ExtentFlag;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileExtent;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Extent reports ({@link IomapFile#fiemap}, {@code FS_IOC_FIEMAP}): written blocks are extents and
 * holes are not, exactly at block granularity once written back; preallocated space is
 * {@link ExtentFlag#UNWRITTEN} until written; the answer is clipped to the range asked for, and its
 * last extent is {@link ExtentFlag#LAST} when the range reaches EOF. The neighbour of
 * {@link SeekContract}, with the same care about speculative preallocation: the farthest data is
 * written first, on files smaller than any preallocation threshold. Needs files of its own (skipped on
 * a fixed namespace).
 */
public abstract class ExtentMapContract extends AdapterContract {

    private void assumeCreatedFiles() {
        assumeTrue(kit().existingFiles() == null, "needs files of its own; this fixture uses existing files");
    }

    /** The extents' ranges, merged where they touch, as {@code {start, end}} pairs; checks order and LAST. */
    private static List<long[]> covered(List<FileExtent> extents, boolean lastExpected) {
        List<long[]> ranges = new ArrayList<>();
        long previousEnd = -1;
        for (int i = 0; i < extents.size(); i++) {
            FileExtent e = extents.get(i);
            assertThat(e.logical()).as("extents in file order, not overlapping: %s", extents)
                    .isGreaterThanOrEqualTo(previousEnd);
            assertThat(e.length()).isPositive();
            boolean last = i == extents.size() - 1 && lastExpected;
            assertThat(e.flags().contains(ExtentFlag.LAST)).as("LAST on extent %d of %s", i, extents).isEqualTo(last);
            if (!ranges.isEmpty() && ranges.getLast()[1] == e.logical()) {
                ranges.getLast()[1] = e.end();
            } else {
                ranges.add(new long[] {e.logical(), e.end()});
            }
            previousEnd = e.end();
        }
        return ranges;
    }

    private static List<String> text(List<long[]> ranges) {
        return ranges.stream().map(r -> "[" + r[0] + ", " + r[1] + ")").toList();
    }

    @Test
    void anEmptyFileHasNoExtentsAndNegativeRangesAreInvalid() throws IOException {
        assumeCreatedFiles();
        IomapFile file = create("/a");
        assertThat(file.fiemap(0, Long.MAX_VALUE, true)).isEmpty();
        assertThatThrownBy(() -> file.fiemap(-1, 10, false)).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> file.fiemap(0, -10, false)).isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void writtenBlocksAreExtentsAndHolesAreNot() throws IOException {
        assumeCreatedFiles();
        long block = blockSize();
        IomapFile file = create("/a");
        writePattern(file, 5 * block, (int) (2 * block), 1);     // the farthest first: no preallocation past it
        writePattern(file, 0, (int) (2 * block), 2);
        List<FileExtent> all = file.fiemap(0, Long.MAX_VALUE, true);
        assertThat(text(covered(all, true))).as("extents of %s", all)
                .containsExactly("[0, " + 2 * block + ")", "[" + 5 * block + ", " + 7 * block + ")");
        for (FileExtent e : all) {
            assertThat(e.flags()).as("flags of a written extent %s", e)
                    .doesNotContain(ExtentFlag.UNWRITTEN, ExtentFlag.DELALLOC, ExtentFlag.UNKNOWN);
        }
        List<FileExtent> middle = file.fiemap(block, 5 * block, false);
        assertThat(text(covered(middle, false))).as("extents of [%d, %d): %s", block, 6 * block, middle)
                .containsExactly("[" + block + ", " + 2 * block + ")", "[" + 5 * block + ", " + 6 * block + ")");
        remountChecked();
        List<FileExtent> again = open("/a").fiemap(0, Long.MAX_VALUE, false);
        assertThat(text(covered(again, true))).as("after remount: %s", again)
                .containsExactly("[0, " + 2 * block + ")", "[" + 5 * block + ", " + 7 * block + ")");
    }

    @Test
    void preallocatedSpaceIsUnwrittenUntilWritten() throws IOException {
        assumeCreatedFiles();
        assumeCapable(Capability.FALLOCATE, Capability.UNWRITTEN_EXTENTS);
        long block = blockSize();
        IomapFile file = create("/a");
        file.fallocate(FallocateMode.ALLOCATE, 0, 4 * block, false);
        List<FileExtent> before = file.fiemap(0, Long.MAX_VALUE, true);
        assertThat(text(covered(before, true))).containsExactly("[0, " + 4 * block + ")");
        assertThat(before).allSatisfy(e -> assertThat(e.flags()).contains(ExtentFlag.UNWRITTEN));
        writePattern(file, block, (int) block, 3);
        List<FileExtent> after = file.fiemap(0, Long.MAX_VALUE, true);
        assertThat(text(covered(after, true))).containsExactly("[0, " + 4 * block + ")");
        for (FileExtent e : after) {
            boolean written = e.logical() < 2 * block && e.end() > block;
            assertThat(e.flags().contains(ExtentFlag.UNWRITTEN)).as("UNWRITTEN on %s of %s", e, after)
                    .isEqualTo(!written);
            if (written) {
                assertThat(Set.of(e.logical(), e.end())).as("the written block alone: %s", after)
                        .containsExactlyInAnyOrder(block, 2 * block);
            }
        }
    }
}
