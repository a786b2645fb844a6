package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Buffered reads: EOF, short reads, holes, unaligned ranges, cold and warm cache. */
public abstract class ReadContract extends AdapterContract {

    @Test
    void readAtOrPastEofReturnsMinusOne() throws IOException {
        IomapFile file = create("/a");
        writePattern(file, 0, 1000, 1);
        assertThat(file.read(1000, ByteBuffer.allocate(10))).isEqualTo(-1);
        assertThat(file.read(1 << 20, ByteBuffer.allocate(10))).isEqualTo(-1);
    }

    @Test
    void aReadStopsAtEof() throws IOException {
        IomapFile file = create("/a");
        byte[] data = writePattern(file, 0, 1000, 1);
        ByteBuffer dst = ByteBuffer.allocate(4096);
        int n = file.read(500, dst);
        assertThat(n).isEqualTo(500);
        assertThat(dst.position()).isEqualTo(500);
        assertBytes(java.util.Arrays.copyOf(dst.array(), 500), java.util.Arrays.copyOfRange(data, 500, 1000), 500);
    }

    @Test
    void aReadFillsTheBufferFromItsPosition() throws IOException {
        IomapFile file = create("/a");
        byte[] data = writePattern(file, 0, 100, 1);
        ByteBuffer dst = ByteBuffer.allocateDirect(64);
        dst.position(10).limit(30);
        assertThat(file.read(5, dst)).isEqualTo(20);
        assertThat(dst.position()).isEqualTo(30);
        byte[] got = new byte[20];
        dst.position(10);
        dst.get(got);
        assertBytes(got, java.util.Arrays.copyOfRange(data, 5, 25), 5);
    }

    @Test
    void aNegativeOffsetIsRefused() throws IOException {
        IomapFile file = create("/a");
        assertThatThrownBy(() -> file.read(-1, ByteBuffer.allocate(1))).isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void dataReadsBackWarmColdAndAfterRemount() throws IOException {
        IomapFile file = create("/a");
        int length = (int) withinFileLimit(Math.min(3 * maxFolioSize() + 12345, 8 << 20));
        byte[] data = writePattern(file, 0, length, 2);
        assertContent(file, data);
        file.fsync();
        dropCache();
        assertContent(file, data);
        remountChecked();
        assertContent(open("/a"), data);
    }

    @Test
    void holesReadAsZeroes() throws IOException {
        assumeCapable(Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        long far = Math.min(3L * maxFolioSize() + 3L * blockSize() + 17, withinFileLimit(Long.MAX_VALUE) - 100);
        byte[] tail = writePattern(file, far, 100, 3);
        byte[] expected = apply(new byte[0], far, tail);
        assertContent(file, expected);
        file.fsync();
        dropCache();
        assertContent(file, expected);
        remountChecked();
        assertContent(open("/a"), expected);
    }

    @Test
    void unalignedReadsAcrossBlocksPagesAndFolios() throws IOException {
        IomapFile file = create("/a");
        int length = (int) withinFileLimit(Math.min(2L * maxFolioSize() + 3L * pageSize() + 123, 5 << 20));
        byte[] data = writePattern(file, 0, length, 4);
        Random random = new Random(kit().settings().seedFor(kit().label() + "/reads"));
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < 200; i++) {
                int pos = random.nextInt(length);
                int len = 1 + random.nextInt(Math.min(3 * pageSize(), length - pos) + 1);
                byte[] got = read(file, pos, len);
                int expectedLength = Math.min(len, length - pos);
                assertBytes(got, java.util.Arrays.copyOfRange(data, pos, pos + expectedLength), pos);
            }
            file.fsync();
            dropCache();
        }
    }

    @Test
    void readsWriteNothing() throws IOException {
        IomapFile file = create("/a");
        writePattern(file, 0, 100_000, 5);
        file.fsync();
        fs.sync();
        dropCache();
        long written = fs.stats().device().bytesWritten();
        readAll(file);
        readAll(file);
        assertThat(fs.stats().device().bytesWritten()).as("device bytes written by reads").isEqualTo(written);
    }

    @Test
    void aColdReadOfCachedDataDoesNotTouchTheDevice() throws IOException {
        IomapFile file = create("/a");
        byte[] data = writePattern(file, 0, 50_000, 6);
        file.fsync();
        readAll(file);
        long reads = fs.stats().device().reads();
        assertContent(file, data);
        assertThat(fs.stats().device().reads()).as("device reads for data already cached").isEqualTo(reads);
    }

    @Test
    void dropCleanCacheDropsWhatWasRead() throws IOException {
        IomapFile file = create("/a");
        byte[] data = writePattern(file, 0, 100_000, 7);
        file.fsync();
        readAll(file);
        assertThat(dropCache()).as("bytes dropped after fsync").isPositive();
        long reads = fs.stats().device().reads();
        assertContent(file, data);
        assertThat(fs.stats().device().reads()).as("device reads after dropping the cache").isGreaterThan(reads);
    }
}
