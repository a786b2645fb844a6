package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Reflink clones and unshare: shared blocks read the same, and a write to one copy never shows in the other. */
public abstract class CloneContract extends AdapterContract {

    @Test
    void aCloneReadsTheSameAndCopiesOnWrite() throws IOException {
        assumeCapable(Capability.CLONE, Capability.RANDOM_WRITE);
        IomapFile source = create("/src");
        int length = 16 * blockSize() + 123;
        byte[] original = writePattern(source, 0, length, 1);
        IomapFile clone = create("/clone");
        clone.cloneRange(source, 0, 0, length);
        assertContent(clone, original);
        long inClone = 5L * blockSize() - 2;
        byte[] cloneModel = apply(original.clone(), inClone, writePattern(clone, inClone, 7, 2));
        byte[] sourceModel = apply(original.clone(), 9L * blockSize(), writePattern(source, 9L * blockSize(), 3, 3));
        assertContent(clone, cloneModel);
        assertContent(source, sourceModel);
        clone.fsync();
        source.fsync();
        dropCache();
        assertContent(clone, cloneModel);
        assertContent(source, sourceModel);
        remountChecked();
        assertContent(open("/clone"), cloneModel);
        assertContent(open("/src"), sourceModel);
    }

    @Test
    void aCloneSharesBlocksInsteadOfCopying() throws IOException {
        assumeCapable(Capability.CLONE);
        IomapFile source = create("/src");
        int blocks = 256;
        writePattern(source, 0, blocks * blockSize(), 1);
        source.fsync();
        fs.sync();
        long free = fs.statfs().freeBlocks();
        create("/clone").cloneRange(source, 0, 0, (long) blocks * blockSize());
        fs.sync();
        assertThat(free - fs.statfs().freeBlocks()).as("blocks used by cloning %d blocks", blocks)
                .isLessThan(blocks / 2);
    }

    @Test
    void aCloneIntoTheMiddleKeepsTheRestAndCanExtend() throws IOException {
        assumeCapable(Capability.CLONE);
        IomapFile source = create("/src");
        byte[] src = writePattern(source, 0, 8 * blockSize(), 1);
        IomapFile target = create("/dst");
        byte[] model = writePattern(target, 0, 10 * blockSize() + 5, 2);
        target.cloneRange(source, 2L * blockSize(), 3L * blockSize(), 4L * blockSize());
        System.arraycopy(src, 2 * blockSize(), model, 3 * blockSize(), 4 * blockSize());
        assertContent(target, model);
        target.cloneRange(source, 0, 12L * blockSize(), 2L * blockSize());
        model = resize(model, 14L * blockSize());
        System.arraycopy(src, 0, model, 12 * blockSize(), 2 * blockSize());
        assertContent(target, model);
        remountChecked();
        assertContent(open("/dst"), model);
        assertContent(open("/src"), src);
    }

    @Test
    void theUnalignedEofBlockClonesIntoAnEmptyFile() throws IOException {
        assumeCapable(Capability.CLONE);
        IomapFile source = create("/src");
        byte[] src = writePattern(source, 0, 3 * blockSize() + 10, 1);
        IomapFile target = create("/dst");
        target.cloneRange(source, 0, 0, src.length);
        assertContent(target, src);
        ByteBuffer tail = ByteBuffer.allocate(pageSize() - src.length % pageSize());
        target.map().load(src.length, tail);
        assertBytes(tail.array(), new byte[tail.capacity()], src.length);
        remountChecked();
        assertContent(open("/dst"), src);
    }

    @Test
    void theUnalignedEofBlockIntoTheMiddleIsRefusedOrKeepsWhatFollows() throws IOException {
        assumeCapable(Capability.CLONE);
        IomapFile source = create("/src");
        byte[] src = writePattern(source, 0, blockSize() + 10, 1);
        IomapFile target = create("/dst");
        byte[] model = writePattern(target, 0, 6 * blockSize(), 2);
        try {
            target.cloneRange(source, 0, 2L * blockSize(), src.length);
            System.arraycopy(src, 0, model, 2 * blockSize(), src.length);
        } catch (InvalidRangeException refused) {
            // Refusing is what Linux does (EINVAL); keeping the bytes after the range is the alternative.
        }
        assertContent(target, model);
        remountChecked();
        assertContent(open("/dst"), model);
    }

    @Test
    void cloneWithinOneFile() throws IOException {
        assumeCapable(Capability.CLONE);
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 8 * blockSize(), 1);
        file.cloneRange(file, 0, 4L * blockSize(), 2L * blockSize());
        System.arraycopy(model, 0, model, 4 * blockSize(), 2 * blockSize());
        assertContent(file, model);
        assertThatThrownBy(() -> file.cloneRange(file, 0, blockSize(), 2L * blockSize()))
                .isInstanceOf(InvalidRangeException.class);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void badCloneRangesAreRefused() throws IOException {
        assumeCapable(Capability.CLONE);
        IomapFile source = create("/src");
        writePattern(source, 0, 4 * blockSize(), 1);
        IomapFile target = create("/dst");
        assertThatThrownBy(() -> target.cloneRange(source, 1, 0, blockSize()))
                .isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> target.cloneRange(source, 0, 1, blockSize()))
                .isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> target.cloneRange(source, 0, 0, blockSize() + 1))
                .isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> target.cloneRange(source, 0, 0, 8L * blockSize()))
                .isInstanceOf(InvalidRangeException.class);
        assertThat(target.size()).isZero();
    }

    @Test
    void unshareKeepsTheContentsAndBreaksTheSharing() throws IOException {
        assumeCapable(Capability.CLONE, Capability.RANDOM_WRITE);
        IomapFile source = create("/src");
        byte[] original = writePattern(source, 0, 8 * blockSize(), 1);
        IomapFile clone = create("/clone");
        clone.cloneRange(source, 0, 0, original.length);
        fs.sync();
        long free = fs.statfs().freeBlocks();
        clone.unshare(0, original.length);
        assertContent(clone, original);
        clone.fsync();
        fs.sync();
        assertThat(fs.statfs().freeBlocks()).as("free blocks after unsharing 8 blocks").isLessThanOrEqualTo(free - 8);
        byte[] sourceModel = apply(original.clone(), 10, writePattern(source, 10, 5, 2));
        assertContent(clone, original);
        source.fsync();
        dropCache();
        assertContent(clone, original);
        assertContent(source, sourceModel);
        remountChecked();
        assertContent(open("/clone"), original);
        assertContent(open("/src"), sourceModel);
    }

    @Test
    void unshareOfUnsharedDataChangesNothing() throws IOException {
        assumeCapable(Capability.COPY_ON_WRITE);
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 5 * blockSize() + 3, 1);
        file.unshare(0, model.length + 100);
        assertContent(file, model);
        file.fsync();
        dropCache();
        assertContent(file, model);
        assertThat(Arrays.equals(readAll(file), model)).isTrue();
    }
}
