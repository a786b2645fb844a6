package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** fallocate: preallocation (keeping the size or not), punching holes and zeroing ranges. */
public abstract class FallocateContract extends AdapterContract {

    @Test
    void allocateKeepingTheSizeReservesSpaceThatReadsAsZeroes() throws IOException {
        assumeCapable(Capability.FALLOCATE);
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 1000, 1);
        fs.sync();
        long free = fs.statfs().freeBlocks();
        file.fallocate(FallocateMode.ALLOCATE, 0, 64L * blockSize(), true);
        assertContent(file, model);
        assertThat(file.stat().allocatedBytes()).isGreaterThanOrEqualTo(64L * blockSize());
        assertThat(fs.statfs().freeBlocks()).isLessThanOrEqualTo(free - 63);
        remountChecked();
        IomapFile again = open("/a");
        assertContent(again, model);
        assertThat(again.stat().allocatedBytes()).isGreaterThanOrEqualTo(64L * blockSize());
    }

    @Test
    void allocatePastEofExtendsTheSizeUnlessKept() throws IOException {
        assumeCapable(Capability.FALLOCATE);
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 1000, 1);
        file.fallocate(FallocateMode.ALLOCATE, 500, 3 * blockSize() + 1, false);
        model = resize(model, 500 + 3 * blockSize() + 1);
        assertContent(file, model);
        file.fallocate(FallocateMode.ALLOCATE, model.length, 10L * blockSize(), true);
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void writesIntoPreallocatedSpaceReadBack() throws IOException {
        assumeCapable(Capability.FALLOCATE, Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        long length = 4L * Math.max(pageSize(), blockSize());
        file.fallocate(FallocateMode.ALLOCATE, 0, length, false);
        byte[] model = new byte[(int) length];
        long[] positions = {blockSize() / 2 + 1, pageSize() + 3, 2L * pageSize() + blockSize(), length - 5};
        for (int i = 0; i < positions.length; i++) {
            int len = (int) Math.min(blockSize() + 11, length - positions[i]);
            model = apply(model, positions[i], writePattern(file, positions[i], len, i));
        }
        assertContent(file, model);
        file.fsync();
        dropCache();
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void punchHoleZeroesTheRangeKeepsTheSizeAndFreesWholeBlocks() throws IOException {
        assumeCapable(Capability.PUNCH_HOLE);
        IomapFile file = create("/a");
        long length = 64L * blockSize();
        byte[] model = writePattern(file, 0, (int) length, 1);
        file.fsync();
        long allocated = file.stat().allocatedBytes();
        long start = 3L * blockSize() + 100;
        long punch = 40L * blockSize();
        file.fallocate(FallocateMode.PUNCH_HOLE, start, punch, true);
        Arrays.fill(model, (int) start, (int) (start + punch), (byte) 0);
        assertContent(file, model);
        file.fsync();
        assertThat(file.stat().allocatedBytes()).as("allocated bytes after punching 39 whole blocks")
                .isLessThanOrEqualTo(allocated - 39L * blockSize());
        dropCache();
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void punchHoleInsideOneBlockAndPastEof() throws IOException {
        assumeCapable(Capability.PUNCH_HOLE);
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 3 * blockSize(), 1);
        file.fallocate(FallocateMode.PUNCH_HOLE, blockSize() + 10, 20, true);
        Arrays.fill(model, blockSize() + 10, blockSize() + 30, (byte) 0);
        file.fallocate(FallocateMode.PUNCH_HOLE, 2L * blockSize() + 7, 10L * blockSize(), false);
        Arrays.fill(model, 2 * blockSize() + 7, model.length, (byte) 0);
        assertContent(file, model);
        file.fsync();
        dropCache();
        assertContent(file, model);
    }

    @Test
    void punchHoleOfDirtyCacheDropsIt() throws IOException {
        assumeCapable(Capability.PUNCH_HOLE);
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 4 * pageSize(), 1);
        file.fallocate(FallocateMode.PUNCH_HOLE, 0, 2L * pageSize(), true);
        Arrays.fill(model, 0, 2 * pageSize(), (byte) 0);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void zeroRangeKeepingOrExtendingTheSize() throws IOException {
        assumeCapable(Capability.ZERO_RANGE);
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 10 * blockSize(), 1);
        file.fsync();
        file.fallocate(FallocateMode.ZERO_RANGE, blockSize() - 3, 5L * blockSize(), true);
        Arrays.fill(model, blockSize() - 3, 6 * blockSize() - 3, (byte) 0);
        assertContent(file, model);
        file.fallocate(FallocateMode.ZERO_RANGE, 9L * blockSize() + 1, 4L * blockSize(), true);
        Arrays.fill(model, 9 * blockSize() + 1, model.length, (byte) 0);
        assertContent(file, model);
        file.fallocate(FallocateMode.ZERO_RANGE, 9L * blockSize(), 4L * blockSize(), false);
        model = resize(model, 13L * blockSize());
        Arrays.fill(model, 9 * blockSize(), model.length, (byte) 0);
        assertContent(file, model);
        dropCache();
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void zeroRangeThenWriteInsideIt() throws IOException {
        assumeCapable(Capability.ZERO_RANGE, Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 8 * blockSize(), 1);
        file.fsync();
        file.fallocate(FallocateMode.ZERO_RANGE, 0, 8L * blockSize(), true);
        Arrays.fill(model, (byte) 0);
        model = apply(model, 3L * blockSize() + 5, writePattern(file, 3L * blockSize() + 5, 10, 2));
        file.fsync();
        dropCache();
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void badRangesAreRefused() throws IOException {
        IomapFile file = create("/a");
        writePattern(file, 0, 100, 1);
        for (FallocateMode mode : FallocateMode.values()) {
            assertThatThrownBy(() -> file.fallocate(mode, 0, 0, true)).as("%s of length 0", mode)
                    .isInstanceOf(InvalidRangeException.class);
            assertThatThrownBy(() -> file.fallocate(mode, -1, 10, true)).as("%s at -1", mode)
                    .isInstanceOf(InvalidRangeException.class);
            assertThatThrownBy(() -> file.fallocate(mode, Long.MAX_VALUE - 5, 10, true)).as("%s overflowing", mode)
                    .isInstanceOf(InvalidRangeException.class);
        }
        assertThat(file.size()).isEqualTo(100);
    }
}
