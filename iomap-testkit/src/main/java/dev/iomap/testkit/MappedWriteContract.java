package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.MappedFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Writes through a shared mapping: write faults allocate, only what is inside EOF is written back. */
public abstract class MappedWriteContract extends AdapterContract {

    private static void store(MappedFile map, long pos, byte[] data) throws IOException {
        map.store(pos, ByteBuffer.wrap(data));
    }

    /** @return the end of the page holding the byte before {@code size}: how far a mapping of the file reaches */
    private int pageEnd(int size) {
        return (size + pageSize() - 1) / pageSize() * pageSize();
    }

    private static byte[] load(MappedFile map, long pos, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        map.load(pos, dst);
        return dst.array();
    }

    @Test
    void aStoreShowsInReadsAndSurvivesRemount() throws IOException {
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 3 * Math.max(pageSize(), blockSize()), 1);
        file.fsync();
        dropCache();
        MappedFile map = file.map();
        long pos = (long) pageSize() + blockSize() / 2 - 1;
        byte[] data = TestData.pattern(2, pos, blockSize() + 2);
        store(map, pos, data);
        model = apply(model, pos, data);
        assertContent(file, model);
        assertBytes(load(map, 0, model.length), model, 0);
        file.fsync();
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void aStoreIntoAHoleAllocates() throws IOException {
        assumeCapable(Capability.TRUNCATE);
        IomapFile file = create("/a");
        long size = 4L * pageSize();
        file.truncate(size);
        byte[] model = new byte[(int) size];
        for (int i = 0; i < 4; i++) {
            long pos = (long) i * pageSize() + (long) i * blockSize() % pageSize() + 3;
            byte[] data = TestData.pattern(i, pos, 100);
            store(file.map(), pos, data);
            model = apply(model, pos, data);
        }
        file.fsync();
        dropCache();
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void aStoreIntoPreallocatedSpace() throws IOException {
        assumeCapable(Capability.FALLOCATE);
        IomapFile file = create("/a");
        long size = 3L * pageSize();
        file.fallocate(FallocateMode.ALLOCATE, 0, size, false);
        byte[] data = TestData.pattern(1, pageSize() + 5, Math.min(2 * blockSize(), pageSize()));
        store(file.map(), pageSize() + 5, data);
        byte[] model = apply(new byte[(int) size], pageSize() + 5, data);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void loadsPastEofInTheLastPageReadZeroes() throws IOException {
        IomapFile file = create("/a");
        int size = pageSize() + blockSize() / 2 + 7;
        writePattern(file, 0, size, 1);
        int tail = pageEnd(size) - size;
        assertBytes(load(file.map(), size, tail), new byte[tail], size);
        file.fsync();
        dropCache();
        assertBytes(load(file.map(), size, tail), new byte[tail], size);
    }

    @Test
    void aStorePastEofInTheLastPageIsNeverWrittenBack() throws IOException {
        IomapFile file = create("/a");
        int size = pageSize() + blockSize() / 2 + 7;
        byte[] model = writePattern(file, 0, size, 1);
        file.fsync();
        int tail = pageEnd(size) - size;
        store(file.map(), size, TestData.pattern(2, size, tail));
        assertContent(file, model);
        file.fsync();
        dropCache();
        assertBytes(load(file.map(), size, tail), new byte[tail], size);
        remountChecked();
        IomapFile again = open("/a");
        assertContent(again, model);
        assertBytes(load(again.map(), size, tail), new byte[tail], size);
    }

    @Test
    void aStoreBeyondTheLastPageIsRefused() throws IOException {
        IomapFile file = create("/a");
        writePattern(file, 0, 10, 1);
        assertThatThrownBy(() -> file.map().store(pageSize(), ByteBuffer.allocate(1)))
                .isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> file.map().store(pageSize() - 1, ByteBuffer.allocate(2)))
                .isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> create("/empty").map().store(0, ByteBuffer.allocate(1)))
                .isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void truncateAfterAStoreDropsWhatWasStored() throws IOException {
        assumeCapable(Capability.TRUNCATE);
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 2 * pageSize(), 1);
        store(file.map(), pageSize() + 3, TestData.pattern(2, pageSize() + 3, 50));
        file.truncate(pageSize());
        file.truncate(2L * pageSize());
        java.util.Arrays.fill(model, pageSize(), model.length, (byte) 0);
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void aStoreIntoASharedBlockCopiesOnWrite() throws IOException {
        assumeCapable(Capability.CLONE);
        IomapFile source = create("/src");
        byte[] original = writePattern(source, 0, 4 * pageSize(), 1);
        IomapFile clone = create("/clone");
        clone.cloneRange(source, 0, 0, original.length);
        byte[] data = TestData.pattern(2, pageSize() + 1, 10);
        store(clone.map(), pageSize() + 1, data);
        byte[] cloneModel = apply(original.clone(), pageSize() + 1, data);
        clone.fsync();
        dropCache();
        assertContent(source, original);
        assertContent(clone, cloneModel);
        remountChecked();
        assertContent(open("/src"), original);
        assertContent(open("/clone"), cloneModel);
    }
}
