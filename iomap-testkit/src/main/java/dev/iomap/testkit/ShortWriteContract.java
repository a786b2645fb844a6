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
 * As in the kernel's {@code iomap_write_iter}, the write keeps exactly the bytes before the fault (a short
 * copy that {@code iomap_write_end} refuses, into a folio that is not uptodate, is written again over just
 * the bytes it copied) and returns their count, or fails with {@link BadAddressException} (EFAULT) if the
 * source faults at its first byte. Nothing past the fault may show: neither the source's bytes nor anything
 * else, over a hole as over data, also in the partial block where the write starts. The adapter's
 * {@code end} learns the short length and must give back what it allocated for the rest (the
 * allocate-at-write pattern's "free the NEW blocks a short write did not fill", delayed allocation's
 * punch of the reservation): every byte the write did not keep reads as it was before (zero in a hole),
 * in the cache, after fsync and a cache drop, and after a remount, and fsck finds nothing.
 *
 * <p>The free blocks first hold another file's bytes (files that filled the device, then were deleted),
 * so that a block an adapter maps without having written it shows them.
 */
public abstract class ShortWriteContract extends AdapterContract {
    /** Fault points in the source: {@link FaultingBuffer#PAGE}. */
    static final int SOURCE_PAGE = FaultingBuffer.PAGE;
    /** The seed of the bytes in the free blocks. */
    private static final long STALE_SEED = 0x5a1e;

    /** One short write: where, how long, where its source faults (the bytes it keeps), and what that is. */
    private record Case(String path, long pos, int length, int faultAt, String what) {
    }

    /**
     * Into a hole inside EOF, three writes: one whose source faults at its first byte (nothing written:
     * EFAULT), one whose fault falls on a boundary of the largest folio (where the file limit leaves room
     * for such a boundary), one whose fault falls inside a block; each of the last two keeps exactly the
     * bytes before its fault.
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
        cases.add(new Case("/fault-first", 0, (int) Math.min(2 * SOURCE_PAGE, tail), 0, "at its first byte"));
        long boundary = Math.max(SOURCE_PAGE, maxFolioSize());
        if (boundary + SOURCE_PAGE <= tail) {
            cases.add(new Case("/fault-folio", boundary - SOURCE_PAGE, 2 * SOURCE_PAGE, SOURCE_PAGE,
                    "on a folio boundary"));
        }
        cases.add(new Case("/fault-mid", (long) bs + bs / 2, 2 * SOURCE_PAGE, SOURCE_PAGE, "inside a block"));
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
     * Over data (a file written whole, fsynced, its cache dropped), the same three writes, and one that
     * starts inside a block of the largest folio and faults further inside that folio: the block where it
     * starts is read before the copy, so a write that kept nothing of the folio but reported EFAULT would
     * leave the bytes it copied there readable. Each keeps exactly the bytes before its fault; every other
     * byte is the old data.
     */
    @Test
    void aWriteOverDataWhoseSourceFaultsKeepsOnlyTheBytesBeforeTheFault() throws IOException {
        assumeTrue(kit().existingFiles() == null, "the namespace is fixed: no file of its own to write into");
        assumeCapable(Capability.RANDOM_WRITE);
        int bs = blockSize();
        long folio = Math.max(SOURCE_PAGE, maxFolioSize());
        long size = withinFileLimit(Math.max(4L << 20, 3 * folio)) / bs * bs;
        int span = 2 * SOURCE_PAGE;
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("/data-first", bs / 2, span, 0, "at its first byte"));
        if (folio + SOURCE_PAGE <= size) {
            cases.add(new Case("/data-folio", folio - SOURCE_PAGE, span, SOURCE_PAGE, "on a folio boundary"));
        }
        cases.add(new Case("/data-mid", (long) bs + bs / 2, span, SOURCE_PAGE, "inside a block"));
        long inFolio = folio + bs / 2;
        int folioSpan = (int) Math.min(folio, Integer.MAX_VALUE - SOURCE_PAGE);
        if (inFolio + folioSpan <= size) {
            cases.add(new Case("/data-in-folio", inFolio, folioSpan, SOURCE_PAGE,
                    "inside the largest folio, the write starting inside a block of it"));
        }
        cases.removeIf(c -> c.pos() + c.length() > size);
        assumeTrue(!cases.isEmpty(), "files are smaller than the writes need");
        List<byte[]> models = new ArrayList<>();
        for (Case c : cases) {
            IomapFile file = create(c.path());
            byte[] model = writePattern(file, 0, (int) size, 5);
            file.fsync();
            dropCache();
            models.add(shortWrite(file, c, model));
        }
        checkAfterFsyncAndRemount(cases, models);
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
        Case c = new Case("/append", start, 2 * SOURCE_PAGE, SOURCE_PAGE, "past EOF");
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
     * Runs one short write and checks what it returned and what the file holds: EFAULT and nothing changed
     * for a source that faults at its first byte, else exactly the bytes before the fault.
     *
     * @return the file's contents now
     */
    private byte[] shortWrite(IomapFile file, Case c, byte[] before) throws IOException {
        byte[] data = TestData.pattern(11, c.pos(), c.length());
        long sizeBefore = file.size();
        try (FaultingBuffer source = new FaultingBuffer(data, c.faultAt())) {
            ByteBuffer src = source.buffer();
            if (c.faultAt() == 0) {
                assertThatThrownBy(() -> file.write(c.pos(), src)).as("a write whose source faults %s", c.what())
                        .isInstanceOf(BadAddressException.class);
                assertThat(src.position()).as("buffer position after EFAULT (%s)", c.what()).isZero();
                assertContent(file, before);
                return before;
            }
            int kept = file.write(c.pos(), src);
            assertThat(kept).as("bytes written by a write whose source faults %s (at byte %d): exactly those"
                    + " before the fault, as the kernel's iomap_write_iter returns", c.what(), c.faultAt())
                    .isEqualTo(c.faultAt());
            assertThat(src.position()).as("buffer position after the short write").isEqualTo(kept);
            byte[] model = apply(before, c.pos(), java.util.Arrays.copyOf(data, kept));
            assertThat(file.size()).as("size after the short write").isEqualTo(Math.max(sizeBefore, c.pos() + kept));
            assertContent(file, model);
            return model;
        }
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
