package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.ExtentState;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.NoDataException;
import dev.iomap.core.CachedInode;
import dev.iomap.device.DeviceStats;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Seek through the core over every kind of xfs-like extent at once: written, delalloc under dirty
 * cache, unwritten, shared with a COW staging extent under dirty cache. The answers follow
 * {@code xfs_seek_iomap_begin}, and asking changes nothing: no reservation, allocation or conversion,
 * no validity cookie bumped, no device write.
 */
class SeekReportTest {
    private static final int BLOCK = DirectMount.BLOCK;

    @Test
    void seeksAnswerPerExtentAndChangeNothing() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode inode = dm.create("f");
            DirectMount.write(inode, 0, pattern(1, 0, 2 * BLOCK));           // blocks 0-1: written
            dm.fsync(inode);
            dm.trimPreallocation(inode);
            inode.truncate(10L * BLOCK, () -> dm.mount.setSize(inode, 10L * BLOCK));
            dm.mount.cloneRange(inode, 0, inode, 8L * BLOCK, 2L * BLOCK);    // blocks 8-9: shared
            dm.mount.fallocate(inode, FallocateMode.ALLOCATE, 4L * BLOCK, 2L * BLOCK);  // 4-5: unwritten
            DirectMount.write(inode, 9L * BLOCK + 100, pattern(2, 0, 50));   // 9: COW staged, dirty
            DirectMount.write(inode, 12L * BLOCK, pattern(3, 0, BLOCK - 1));  // 12: delalloc, dirty
            long size = 13L * BLOCK - 1;
            assertThat(inode.size()).isEqualTo(size);
            InodeState state = dm.mount.volume().inodes.get(inode.ino());
            assertThat(state.cow.extents()).singleElement()
                    .satisfies(extent -> assertThat(extent.state()).isEqualTo(ExtentState.DELALLOC));

            long sequence = state.sequence;
            var data = List.copyOf(state.data.extents());
            var cow = List.copyOf(state.cow.extents());
            long[] counters = dm.counters();
            DeviceStats device = dm.device.stats();

            List<String> answers = new ArrayList<>();
            for (long pos = 0; pos < size; pos += BLOCK / 2) {
                answers.add(pos + ": data " + seekData(inode, pos) + ", hole " + inode.seekHole(pos));
            }

            assertThat(state.sequence).as("validity cookie").isEqualTo(sequence);
            assertThat(state.data.extents()).as("data fork").isEqualTo(data);
            assertThat(state.cow.extents()).as("COW fork").isEqualTo(cow);
            assertThat(dm.counters()).as("free, reserved, allocator free").isEqualTo(counters);
            assertThat(dm.device.stats()).as("device traffic").isEqualTo(device);

            long b = BLOCK;
            assertThat(answers.get(0)).isEqualTo("0: data 0, hole " + 2 * b);
            assertThat(answers.get(3)).isEqualTo(3 * b / 2 + ": data " + 3 * b / 2 + ", hole " + 2 * b);
            assertThat(answers.get(4)).as("a hole").isEqualTo(2 * b + ": data " + 8 * b + ", hole " + 2 * b);
            assertThat(answers.get(9)).as("unwritten, nothing cached")
                    .isEqualTo(9 * b / 2 + ": data " + 8 * b + ", hole " + 9 * b / 2);
            assertThat(answers.get(17)).as("shared, COW staged over it")
                    .isEqualTo(17 * b / 2 + ": data " + 17 * b / 2 + ", hole " + 10 * b);
            assertThat(answers.get(20)).as("the gap zeroed by the extending write")
                    .isEqualTo(10 * b + ": data " + 12 * b + ", hole " + 10 * b);
            assertThat(answers.get(25)).as("delalloc up to EOF")
                    .isEqualTo(25 * b / 2 + ": data " + 25 * b / 2 + ", hole " + size);
            assertThatThrownBy(() -> inode.seekData(size)).isInstanceOf(NoDataException.class);
        }
    }

    private static String seekData(CachedInode inode, long pos) throws Exception {
        try {
            return Long.toString(inode.seekData(pos));
        } catch (NoDataException e) {
            return "ENXIO";
        }
    }
}
