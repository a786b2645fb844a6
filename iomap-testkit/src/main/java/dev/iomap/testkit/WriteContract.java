package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.WritebackException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Buffered writes: extending, overwriting, sub-block and sparse writes, buffers, limits, ENOSPC. */
public abstract class WriteContract extends AdapterContract {

    @Test
    void appendsExtendTheFile() throws IOException {
        IomapFile file = create("/a");
        byte[] model = new byte[0];
        for (int i = 0; i < 400; i++) {
            int length = 1 + (i * 37) % 600;
            model = apply(model, model.length, writePattern(file, model.length, length, i));
            assertThat(file.size()).isEqualTo(model.length);
        }
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void appendOpensWriteAtTheEndWhateverPositionTheyAreGiven() throws IOException {
        IomapFile plain = create("/a");
        byte[] model = writePattern(plain, 0, blockSize() + 7, 1);
        IomapFile first = open("/a", java.util.EnumSet.of(dev.iomap.api.OpenFlag.APPEND));
        IomapFile second = open("/a", java.util.EnumSet.of(dev.iomap.api.OpenFlag.APPEND));
        assertThat(first.openFlags()).containsExactly(dev.iomap.api.OpenFlag.APPEND);
        for (int i = 0; i < 12; i++) {
            IomapFile file = i % 2 == 0 ? first : second;
            byte[] data = TestData.pattern(10 + i, model.length, 1 + (i * 173) % (2 * blockSize()));
            ByteBuffer src = ByteBuffer.wrap(data);
            assertThat(file.write(i % 3 == 0 ? 0 : model.length + 5, src)).as("append %d", i).isEqualTo(data.length);
            model = apply(model, model.length, data);
            assertThat(plain.size()).isEqualTo(model.length);
        }
        assertContent(plain, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void overwritesKeepTheBytesAround() throws IOException {
        assumeCapable(Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        int length = 4 * pageSize() + 3 * blockSize();
        byte[] model = writePattern(file, 0, length, 1);
        file.fsync();
        dropCache();
        Random random = new Random(kit().settings().seedFor(kit().label() + "/overwrite"));
        for (int i = 0; i < 100; i++) {
            int pos = random.nextInt(length);
            int len = 1 + random.nextInt(Math.min(length - pos, 2 * blockSize()));
            model = apply(model, pos, writePattern(file, pos, len, 100 + i));
            if (i % 25 == 24) {
                file.fsync();
                dropCache();
            }
        }
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void oneByteWritesIntoEveryBlockOfAColdFile() throws IOException {
        assumeCapable(Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        int blocks = 2 * pageSize() / blockSize() + 2;
        byte[] model = writePattern(file, 0, blocks * blockSize(), 1);
        file.fsync();
        dropCache();
        for (int block = 0; block < blocks; block++) {
            long pos = (long) block * blockSize() + (block * 131) % blockSize();
            model = apply(model, pos, writePattern(file, pos, 1, 2));
        }
        assertContent(file, model);
        file.fsync();
        dropCache();
        assertContent(file, model);
    }

    @Test
    void aWritePastEofLeavesZeroesBetween() throws IOException {
        assumeCapable(Capability.RANDOM_WRITE);
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, blockSize() / 2 + 3, 1);
        long far = Math.min(2 * maxFolioSize() + blockSize() + 7, withinFileLimit(Long.MAX_VALUE) - 10);
        model = apply(model, far, writePattern(file, far, 10, 2));
        assertContent(file, model);
        file.fsync();
        dropCache();
        assertContent(file, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void aZeroLengthWriteChangesNothing() throws IOException {
        IomapFile file = create("/a");
        assertThat(file.write(0, ByteBuffer.allocate(0))).isZero();
        assertThat(file.size()).isZero();
        byte[] data = writePattern(file, 0, 10, 1);
        assertThat(file.write(10, ByteBuffer.allocate(0))).isZero();
        assertContent(file, data);
    }

    @Test
    void directAndSlicedBuffersWrite() throws IOException {
        IomapFile file = create("/a");
        byte[] data = TestData.pattern(1, 0, 3000);
        ByteBuffer direct = ByteBuffer.allocateDirect(4000);
        direct.position(500);
        direct.put(data);
        direct.position(500).limit(3500);
        assertThat(file.write(0, direct)).isEqualTo(3000);
        assertThat(direct.position()).isEqualTo(3500);
        ByteBuffer readOnly = ByteBuffer.wrap(TestData.pattern(2, 3000, 100)).asReadOnlyBuffer();
        assertThat(file.write(3000, readOnly)).isEqualTo(100);
        assertContent(file, apply(data, 3000, TestData.pattern(2, 3000, 100)));
    }

    @Test
    void badOffsetsAreRefused() throws IOException {
        IomapFile file = create("/a");
        assertThatThrownBy(() -> file.write(-1, ByteBuffer.allocate(1))).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> file.write(Long.MAX_VALUE - 10, ByteBuffer.allocate(100)))
                .isInstanceOf(InvalidRangeException.class);
        assertThat(file.size()).isZero();
    }

    @Test
    void aLargeWriteSpanningManyFolios() throws IOException {
        IomapFile file = create("/a");
        int length = (int) withinFileLimit(Math.min(4L * maxFolioSize() + 5L * pageSize() + 1, 12 << 20));
        byte[] data = writePattern(file, 0, length, 9);
        assertContent(file, data);
        file.fsync();
        remountChecked();
        assertContent(open("/a"), data);
    }

    @Test
    void aFullFilesystemSaysNoSpaceAndRecovers() throws IOException {
        assumeTrue(kit().existingFiles() == null, "the namespace is fixed: nothing to fill with");
        long chunk = 256 << 10;
        // One file, or as few as the adapter's file-size limit allows.
        long perFile = Math.min(fs.maxFileSize(), 2 * device.capacity()) / chunk * chunk;
        if (perFile == 0) {
            perFile = Math.min(fs.maxFileSize(), 2 * device.capacity()) / blockSize() * blockSize();
            chunk = perFile;
        }
        Fill fill = fillUntilNoSpace("/fill", perFile, (int) chunk);
        emptyAndSync(fill);
        byte[] data = writePattern(create("/after"), 0, (int) withinFileLimit(1 << 20), 3);
        remountChecked();
        assertContent(open("/after"), data);
    }

    /**
     * Many small files (each past twelve direct block pointers, ending mid-block) fill the device; a
     * second fill of the same names after the first is unlinked ends with exactly as many free blocks
     * as the first: nothing the ENOSPC paths allocated (an indirect block, a reservation) leaks.
     */
    @Test
    void manySmallFilesFillTheFilesystemAndEveryBlockComesBack() throws IOException {
        assumeTrue(kit().existingFiles() == null, "the namespace is fixed: nothing to fill with");
        long size = Math.min(fs.maxFileSize(), Math.max(16L * blockSize(), 256L << 10) + blockSize() / 2);
        Fill first = fillUntilNoSpace("/small-", size, (int) Math.min(size, 64 << 10));
        assertThat(first.files()).as("files written before the device was full").isGreaterThan(1);
        long freeAfterFirst = emptyAndSync(first);
        Fill second = fillUntilNoSpace("/small-", size, (int) Math.min(size, 64 << 10));
        long freeAfterSecond = emptyAndSync(second);
        assertThat(freeAfterSecond).as("free blocks after the second fill and unlink (%d after the first; "
                + "%d and %d files)", freeAfterFirst, first.files(), second.files()).isEqualTo(freeAfterFirst);
        byte[] data = writePattern(create("/after"), 0, (int) withinFileLimit(1 << 20), 4);
        remountChecked();
        assertContent(open("/after"), data);
    }

    /**
     * The device full to the block; then, in rounds, one block freed (a filler truncated by a block) and a
     * file grown a block at a time until {@link NoSpaceException}, with fsck after every round. The growing
     * file starts at 8 blocks and passes its 13th (where an ext2-like inode needs an indirect block) with
     * exactly one block free on the way, so an ENOSPC path that allocates a metadata block and then finds no
     * data block runs: it must keep that block or give it back. At the end everything is deleted and, after
     * a remount (an adapter may free late, at a checkpoint), the free blocks are those of the freshly
     * formatted filesystem. {@code -Dkit.noSpaceRounds=N} runs more rounds (default 10: a file that takes
     * the one freed block every round ends past its 18th block).
     */
    @Test
    void growingIntoTheLastFreeBlocksOneAtATimeLeaksNothing() throws IOException {
        assumeTrue(kit().existingFiles() == null, "the namespace is fixed: nothing to fill with");
        assumeCapable(Capability.TRUNCATE);
        int bs = blockSize();
        assumeTrue(fs.maxFileSize() >= 32L * bs, "files hold fewer than 32 blocks");
        remountChecked();
        long fresh = fs.statfs().freeBlocks();
        IomapFile grow = create("/grow");
        writePattern(grow, 0, 8 * bs, 1);
        grow.fsync();
        long perFile = withinFileLimit(8L << 20) / bs * bs;
        java.util.List<String> fillers = DeviceFill.untilNoSpace(fs, "/fill-", perFile,
                (int) Math.min(perFile, 1 << 20), bs, 2, true, 2 * device.capacity()).paths();
        int rounds = Integer.getInteger("kit.noSpaceRounds", 10);
        for (int round = 0; round <= rounds; round++) {
            if (round > 0) {
                try (IomapFile filler = fs.open(fillers.get(0))) {
                    assumeTrue(filler.size() >= bs, "the filler has no block left to free");
                    filler.truncate((filler.size() - 1) / bs * bs);
                }
                fs.sync();
            }
            grow = open("/grow");
            for (int block = 0; block < 64 && grow.size() + bs <= fs.maxFileSize(); block++) {
                if (!growByABlock(grow)) {
                    break;
                }
            }
            remountChecked();
        }
        for (String path : fillers) {
            fs.unlink(path);
        }
        fs.unlink("/grow");
        fs.sync();
        remountChecked();
        assertThat(fs.statfs().freeBlocks()).as("free blocks after everything is deleted, against a freshly"
                + " formatted filesystem").isEqualTo(fresh);
    }

    /** @return false if the filesystem had no space for one more block at EOF (at the write or at fsync) */
    private boolean growByABlock(IomapFile file) throws IOException {
        long size = file.size();
        try {
            writePattern(file, size, blockSize(), 3);
        } catch (NoSpaceException e) {
            assertThat(file.size()).as("size after a write that found no space").isEqualTo(size);
            return false;
        }
        return DeviceFill.fsync(file);
    }

    /** What a fill wrote: the files it created, in order, and the bytes. */
    private record Fill(java.util.List<String> paths, long bytes) {
        int files() {
            return paths.size();
        }
    }

    /**
     * Writes files named {@code prefix} followed by 0, 1, ... of {@code perFile} bytes each in
     * {@code chunk}-byte writes (fsync every 8 MiB and after each file) until the filesystem says it is
     * full, and checks that it says so with {@link NoSpaceException} (at the write, or at fsync through
     * a {@link WritebackException}). Every file is closed when this returns.
     */
    private Fill fillUntilNoSpace(String prefix, long perFile, int chunk) throws IOException {
        java.util.List<String> paths = new java.util.ArrayList<>();
        long limit = 2 * device.capacity();
        long total = 0;
        IOException failure = null;
        while (failure == null && total < limit) {
            String path = prefix + paths.size();
            IomapFile file;
            try {
                file = fs.create(path);
            } catch (NoSpaceException e) {
                failure = e;
                break;
            }
            paths.add(path);
            try (file) {
                long pos = 0;
                while (pos < perFile && total < limit) {
                    int length = (int) Math.min(chunk, perFile - pos);
                    writePattern(file, pos, length, total);
                    pos += length;
                    total += length;
                    if (total % (8L << 20) == 0) {
                        file.fsync();
                    }
                }
                file.fsync();
            } catch (IOException e) {
                failure = e;
            }
        }
        if (failure == null) {
            fail("wrote %d bytes in %d files to a %d-byte device without an error", total, paths.size(),
                    device.capacity());
        }
        boolean noSpace = failure instanceof NoSpaceException
                || (failure instanceof WritebackException && failure.getCause() instanceof NoSpaceException);
        assertThat(noSpace).as("a full filesystem raises NoSpaceException (or reports it at fsync), got %s",
                failure).isTrue();
        return new Fill(paths, total);
    }

    /**
     * Unlinks what {@code fill} created, then unmounts, checks and mounts again (so that whatever an
     * adapter frees late, at a checkpoint or at unmount, is free); returns the free blocks then.
     */
    private long emptyAndSync(Fill fill) throws IOException {
        for (String path : fill.paths()) {
            fs.unlink(path);
        }
        fs.sync();
        assertThat(fs.readdir("/")).as("names left after the unlinks").isEmpty();
        remountChecked();
        return fs.statfs().freeBlocks();
    }
}
