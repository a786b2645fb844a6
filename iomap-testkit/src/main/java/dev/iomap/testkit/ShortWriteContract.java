package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.BadAddressException;
import dev.iomap.api.Capability;
import dev.iomap.api.IomapFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Writes whose source faults part way: a mapped buffer whose file was truncated after it was mapped,
 * the JVM's counterpart of a user buffer that faults in the kernel's {@code copy_folio_from_iter_atomic}.
 * The write keeps the bytes before the fault (at most those: an engine may drop the folio the fault is
 * in, as the kernel's {@code iomap_write_end} does for a folio that is not uptodate) and returns their
 * count, or fails with {@link BadAddressException} (EFAULT) if it kept none. The adapter's {@code end}
 * learns the short length and must give back what it allocated for the rest (the allocate-at-write
 * pattern's "free the NEW blocks a short write did not fill", delayed allocation's punch of the
 * reservation): every byte the write did not keep reads as it was before (zero in a hole), in the cache,
 * after fsync and a cache drop, and after a remount, and fsck finds nothing.
 *
 * <p>The free blocks first hold another file's bytes (files that filled the device, then were deleted),
 * so that a block an adapter maps without having written it shows them.
 */
public abstract class ShortWriteContract extends AdapterContract {
    /** Fault points in the source: {@link FaultingBuffer#PAGE}. */
    static final int SOURCE_PAGE = FaultingBuffer.PAGE;
    /** The seed of the bytes in the free blocks. */
    private static final long STALE_SEED = 0x5a1e;

    /** One short write: where, how long, where its source faults, and how many bytes it may keep. */
    private record Case(String path, long pos, int length, int faultAt, long minKept, String what) {
        boolean exact() {
            return minKept == faultAt;
        }
    }

    /**
     * Into a hole inside EOF, three writes: one whose source faults at its first byte (nothing written:
     * EFAULT), one whose fault falls on a boundary of the largest folio (exactly the bytes before it kept,
     * where the file limit leaves room for such a boundary), one whose fault falls inside a block (at most
     * the bytes before it kept, at least those before the largest folio it is in).
     */
    @Test
    void aWriteIntoAHoleWhoseSourceFaultsKeepsOnlyTheBytesBeforeTheFault() throws IOException {
        assumeTrue(kit().existingFiles() == null, "the namespace is fixed: no file of its own to write into");
        assumeCapable(Capability.RANDOM_WRITE);
        long freeBlocks = fillWithStaleBytesAndFree();
        int bs = blockSize();
        long size = withinFileLimit((4L << 20) + (256 << 10)) / bs * bs;
        long tail = size - bs;
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("/fault-first", 0, (int) Math.min(2 * SOURCE_PAGE, tail), 0, 0, "at its first byte"));
        long boundary = Math.max(SOURCE_PAGE, maxFolioSize());
        if (boundary + SOURCE_PAGE <= tail) {
            cases.add(new Case("/fault-folio", boundary - SOURCE_PAGE, 2 * SOURCE_PAGE, SOURCE_PAGE, SOURCE_PAGE,
                    "on a folio boundary"));
        }
        long mid = (long) bs + bs / 2;
        cases.add(new Case("/fault-mid", mid, 2 * SOURCE_PAGE, SOURCE_PAGE,
                Math.max(0, (mid + SOURCE_PAGE) / maxFolioSize() * maxFolioSize() - mid), "inside a block"));
        List<byte[]> models = new ArrayList<>();
        for (Case c : cases) {
            IomapFile file = create(c.path());
            byte[] model = writePattern(file, tail, bs, 7);
            model = apply(new byte[(int) size], tail, model);
            file.fsync();
            dropCache();
            models.add(shortWrite(file, c, model));
        }
        checkAfterFsyncAndRemount(cases, models);
        for (Case c : cases) {
            fs.unlink(c.path());
        }
        fs.sync();
        remountChecked();
        assertThat(fs.statfs().freeBlocks()).as("free blocks after the files are deleted: every block the short"
                + " writes allocated came back").isEqualTo(freeBlocks);
    }

    /**
     * An append whose source faults: the file ends at the bytes kept, no further; after fsync and a remount
     * (and fsck) too, and a truncate up past the write's end then reads zeroes there.
     */
    @Test
    void anAppendWhoseSourceFaultsEndsTheFileAtTheBytesKept() throws IOException {
        assumeTrue(kit().existingFiles() == null, "the namespace is fixed: no file of its own to append to");
        int bs = blockSize();
        long start = 3L * bs + bs / 2;
        assumeTrue(start + 2L * SOURCE_PAGE <= fs.maxFileSize(), "files are smaller than the append needs");
        IomapFile file = create("/append");
        byte[] model = writePattern(file, 0, (int) start, 3);
        file.fsync();
        dropCache();
        Case c = new Case("/append", start, 2 * SOURCE_PAGE, SOURCE_PAGE,
                Math.max(0, (start + SOURCE_PAGE) / maxFolioSize() * maxFolioSize() - start), "past EOF");
        model = shortWrite(file, c, model);
        checkAfterFsyncAndRemount(List.of(c), List.of(model));
        if (has(Capability.TRUNCATE)) {
            IomapFile again = open(c.path());
            again.truncate(start + c.length());
            assertContent(again, resize(model, start + c.length()));
            again.fsync();
            remountChecked();
            assertContent(open(c.path()), resize(model, start + c.length()));
        }
    }

    /**
     * Runs one short write and checks what it returned and what the file holds.
     *
     * @return the file's contents now
     */
    private byte[] shortWrite(IomapFile file, Case c, byte[] before) throws IOException {
        byte[] data = TestData.pattern(11, c.pos(), c.length());
        long sizeBefore = file.size();
        try (FaultingBuffer source = new FaultingBuffer(data, c.faultAt())) {
            ByteBuffer src = source.buffer();
            if (c.minKept() == 0 && (c.faultAt() == 0 || !c.exact())) {
                int kept;
                try {
                    kept = file.write(c.pos(), src);
                } catch (BadAddressException e) {
                    assertThat(src.position()).as("buffer position after EFAULT (%s)", c.what()).isZero();
                    assertContent(file, before);
                    return before;
                }
                assertThat(c.faultAt()).as("a write whose source faults at its first byte must fail with"
                        + " BadAddressException, but it returned %d", kept).isPositive();
                assertThat(kept).as("a write that kept nothing of a faulting source must fail with"
                        + " BadAddressException, not return 0").isPositive();
                return checkKept(file, c, before, data, kept, src, sizeBefore);
            }
            int kept = file.write(c.pos(), src);
            return checkKept(file, c, before, data, kept, src, sizeBefore);
        }
    }

    private byte[] checkKept(IomapFile file, Case c, byte[] before, byte[] data, int kept, ByteBuffer src,
            long sizeBefore) throws IOException {
        if (c.exact()) {
            assertThat(kept).as("bytes written by a write whose source faults %s (at byte %d)", c.what(),
                    c.faultAt()).isEqualTo(c.faultAt());
        } else {
            assertThat(kept).as("bytes written by a write whose source faults %s (at byte %d; the engine may drop"
                    + " the folio the fault is in, no more)", c.what(), c.faultAt())
                    .isBetween((int) c.minKept(), c.faultAt());
        }
        assertThat(src.position()).as("buffer position after the short write").isEqualTo(kept);
        byte[] model = apply(before, c.pos(), java.util.Arrays.copyOf(data, kept));
        assertThat(file.size()).as("size after the short write").isEqualTo(Math.max(sizeBefore, c.pos() + kept));
        assertContent(file, model);
        return model;
    }

    /** fsync, a cache drop and a remount (with fsck) later, every file still holds exactly its model. */
    private void checkAfterFsyncAndRemount(List<Case> cases, List<byte[]> models) throws IOException {
        for (int i = 0; i < cases.size(); i++) {
            IomapFile file = open(cases.get(i).path());
            file.fsync();
            dropCache();
            assertContent(file, models.get(i));
        }
        remountChecked();
        for (int i = 0; i < cases.size(); i++) {
            assertContent(open(cases.get(i).path()), models.get(i));
        }
    }

    /**
     * Fills the device with files of {@link TestData} bytes, deletes them, and remounts: the free blocks
     * now hold bytes that are never zero.
     *
     * @return the free blocks then
     */
    private long fillWithStaleBytesAndFree() throws IOException {
        long perFile = Math.max(blockSize(), withinFileLimit(8L << 20) / blockSize() * blockSize());
        DeviceFill.Files stale = DeviceFill.untilNoSpace(fs, "/stale-", perFile, (int) Math.min(perFile, 1 << 20),
                blockSize(), STALE_SEED, false, 2 * device.capacity());
        for (String path : stale.paths()) {
            fs.unlink(path);
        }
        fs.sync();
        remountChecked();
        return fs.statfs().freeBlocks();
    }
}
