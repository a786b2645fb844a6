package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Truncate down and up: data past the new size is gone for good, growth reads as zeroes. With
 * {@link Capability#DENSE_FILES}, growth is allocated: a file's allocated bytes cover its size.
 */
public abstract class TruncateContract extends AdapterContract {

    @BeforeEach
    void needsTruncate() {
        assumeCapable(Capability.TRUNCATE);
    }

    /** Every interesting new size of a file of {@code length} bytes: block, page, folio edges ± 1. */
    private long[] sizesFor(long length) {
        long b = blockSize();
        long p = pageSize();
        return new long[] {0, 1, b - 1, b, b + 1, p - 1, p, p + 1, 3 * b + 17, length - 1, length / 2};
    }

    @Test
    void truncateDownThenUpNeverShowsOldData() throws IOException {
        long length = 2L * pageSize() + 3L * blockSize();
        int round = 0;
        for (long size : sizesFor(length)) {
            String name = "/t" + round++;
            IomapFile file = create(name);
            byte[] model = writePattern(file, 0, (int) length, round);
            if (round % 2 == 0) {
                file.fsync();
                dropCache();
            }
            file.truncate(size);
            model = resize(model, size);
            assertContent(file, model);
            file.truncate(length);
            model = resize(model, length);
            assertContent(file, model);
            file.fsync();
            dropCache();
            assertContent(file, model);
        }
        remountChecked();
        round = 0;
        for (long size : sizesFor(length)) {
            String name = "/t" + round++;
            byte[] expected = resize(resize(TestData.pattern(round, 0, (int) length), size), length);
            assertContent(open(name), expected);
        }
    }

    @Test
    void truncateUpReadsZeroes() throws IOException {
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, blockSize() + 3, 1);
        long size = withinFileLimit(2 * maxFolioSize() + 5);
        file.truncate(size);
        model = resize(model, size);
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void bytesPastEofInTheLastPageAreZeroAfterTruncate() throws IOException {
        IomapFile file = create("/a");
        writePattern(file, 0, 3 * Math.max(pageSize(), blockSize()), 1);
        file.fsync();
        long size = (long) pageSize() + blockSize() / 2 + 1;
        file.truncate(size);
        long pageEnd = (size + pageSize() - 1) / pageSize() * pageSize();
        byte[] tail = new byte[(int) (pageEnd - size)];
        ByteBuffer dst = ByteBuffer.allocate(tail.length);
        file.map().load(size, dst);
        assertBytes(dst.array(), tail, size);
        file.fsync();
        dropCache();
        dst.clear();
        file.map().load(size, dst);
        assertBytes(dst.array(), tail, size);
    }

    @Test
    void truncateToZeroFreesTheSpace() throws IOException {
        IomapFile file = create("/a");
        writePattern(file, 0, 256 * blockSize(), 1);
        file.fsync();
        long used = fs.statfs().freeBlocks();
        file.truncate(0);
        file.fsync();
        assertThat(fs.statfs().freeBlocks() - used).as("blocks freed by truncate to 0").isGreaterThanOrEqualTo(200);
        assertThat(file.stat().allocatedBytes()).isLessThan(56L * blockSize());
    }

    @Test
    void truncateOfDirtyDataSurvivesRemount() throws IOException {
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 5 * blockSize() + 77, 1);
        file.truncate(2 * blockSize() + 3);
        model = resize(model, 2 * blockSize() + 3);
        model = apply(model, 4L * blockSize(), writePattern(file, 4L * blockSize(), 10, 2));
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void truncateToTheSameSizeChangesNothing() throws IOException {
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 5000, 1);
        file.truncate(5000);
        assertContent(file, model);
    }

    @Test
    void aNegativeSizeIsRefused() throws IOException {
        IomapFile file = create("/a");
        writePattern(file, 0, 10, 1);
        assertThatThrownBy(() -> file.truncate(-1)).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> file.truncate(Long.MAX_VALUE)).isInstanceOf(InvalidRangeException.class);
        assertThat(file.size()).isEqualTo(10);
    }

    /**
     * With {@link Capability#DENSE_FILES} (skipped without it: a hole may take no space), a write past EOF
     * and a truncate up allocate the gap they leave, which reads as zeroes, also after a remount.
     */
    @Test
    void aDenseFileIsAllocatedUpToItsSize() throws IOException {
        assumeCapable(Capability.DENSE_FILES, Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        long b = blockSize();
        byte[] model = apply(new byte[0], 5 * b + 3, writePattern(file, 5 * b + 3, 10, 1));
        assertAllocatedUpToItsSize(file, "after a write past EOF");
        file.truncate(9 * b + 1);
        model = resize(model, 9 * b + 1);
        assertAllocatedUpToItsSize(file, "after a truncate up");
        assertContent(file, model);
        file.fsync();
        remountChecked();
        IomapFile again = open("/a");
        assertAllocatedUpToItsSize(again, "after a remount");
        assertContent(again, model);
    }

    private void assertAllocatedUpToItsSize(IomapFile file, String when) throws IOException {
        long size = file.size();
        long blocks = Math.ceilDiv(size, blockSize()) * blockSize();
        assertThat(file.stat().allocatedBytes()).as("DENSE_FILES: allocated bytes of a file of %d bytes %s", size,
                when).isGreaterThanOrEqualTo(blocks);
    }

    @Test
    void writesAfterTruncateLeaveZeroesInTheGap() throws IOException {
        assumeCapable(Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 3 * pageSize(), 1);
        file.fsync();
        file.truncate(100);
        model = resize(model, 100);
        long far = 2L * pageSize() + 5;
        model = apply(model, far, writePattern(file, far, 50, 2));
        assertContent(file, model);
        file.fsync();
        dropCache();
        assertContent(file, model);
    }
}
