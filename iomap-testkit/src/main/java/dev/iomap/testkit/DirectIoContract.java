package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.BadAddressException;
import dev.iomap.api.Capability;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OpenFlag;
import dev.iomap.device.DeviceStats;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.fsx.FsxRunner;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Direct I/O ({@link OpenFlag#DIRECT}, the kernel's {@code iomap_dio_rw}): alignment errors,
 * coherence with buffered data in both directions, holes and unwritten extents reading as zeroes,
 * unwritten conversion, EOF extension, copy on write of cloned blocks, {@link OpenFlag#DSYNC} data
 * surviving a power cut, exact device bytes for an overwrite, parallel writers of disjoint ranges,
 * and the model checker ({@link FsxRunner}) with its direct ops ({@code dread}, {@code dwrite}). Runs for adapters declaring {@link Capability#DIRECT_IO}; for the others, only the test
 * that a direct open is refused with {@link NotSupportedException}.
 *
 * <p>Tests create their files: with {@link AdapterFixture#existingFiles()} (a fixed namespace) they
 * are skipped, and the adapter's own tests cover its files (zonefs-like's sequential files take only
 * direct appends).
 */
public abstract class DirectIoContract extends AdapterContract {
    private static final Set<OpenFlag> DIRECT = EnumSet.of(OpenFlag.DIRECT);

    private void assumeDirect() {
        assumeCapable(Capability.DIRECT_IO);
        assumeTrue(kit().existingFiles() == null, "needs files of its own; this fixture uses existing files");
    }

    private IomapFile direct(String path) throws IOException {
        return open(path, DIRECT);
    }

    /** A direct write of {@code data} at {@code pos}, checking that all of it was taken. */
    private static void directWrite(IomapFile file, long pos, byte[] data) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(data);
        assertThat(file.write(pos, src)).as("direct write at %d", pos).isEqualTo(data.length);
        assertThat(src.hasRemaining()).isFalse();
    }

    /** A direct read of {@code length} (aligned) bytes at {@code pos}: the bytes read, and the count. */
    private static byte[] directRead(IomapFile file, long pos, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        int n = file.read(pos, dst);
        if (n < 0) {
            return null;
        }
        assertThat(dst.position()).as("position after a direct read of %d bytes at %d", n, pos).isEqualTo(n);
        return Arrays.copyOf(dst.array(), n);
    }

    @Test
    void aDirectOpenIsRefusedWithoutTheCapability() throws IOException {
        assumeTrue(!has(Capability.DIRECT_IO), kit().adapter().name() + " declares DIRECT_IO");
        AdapterFixture.ExistingFiles existing = kit().existingFiles();
        String path = existing == null ? "/a" : existing.file();
        if (existing == null) {
            create(path);
        }
        assertThatThrownBy(() -> fs.open(path, DIRECT)).isInstanceOf(NotSupportedException.class)
                .hasMessageContaining("DIRECT_IO");
    }

    @Test
    void theOpenFlagsAreReported() throws IOException {
        assumeDirect();
        create("/a");
        assertThat(open("/a", EnumSet.of(OpenFlag.DIRECT, OpenFlag.DSYNC)).openFlags())
                .containsExactlyInAnyOrder(OpenFlag.DIRECT, OpenFlag.DSYNC);
        assertThat(open("/a").openFlags()).isEmpty();
    }

    @Test
    void unalignedOffsetsAndLengthsAreInvalidAndChangeNothing() throws IOException {
        assumeDirect();
        int block = blockSize();
        IomapFile buffered = create("/a");
        byte[] before = writePattern(buffered, 0, 2 * block, 1);
        IomapFile file = direct("/a");
        for (long[] bad : new long[][] {{1, block}, {0, block - 1}, {256, 512}, {block, 511}}) {
            ByteBuffer src = ByteBuffer.wrap(TestData.pattern(2, bad[0], (int) bad[1]));
            assertThatThrownBy(() -> file.write(bad[0], src)).as("direct write of %d at %d", bad[1], bad[0])
                    .isInstanceOf(InvalidRangeException.class);
            assertThat(src.position()).isZero();
            ByteBuffer dst = ByteBuffer.allocate((int) bad[1]);
            assertThatThrownBy(() -> file.read(bad[0], dst)).as("direct read of %d at %d", bad[1], bad[0])
                    .isInstanceOf(InvalidRangeException.class);
            assertThat(dst.position()).isZero();
        }
        assertContent(buffered, before);
    }

    /**
     * Direct I/O aligned to the 512-byte logical sector but not to the block goes through the page cache
     * (XFS's sub-block direct I/O; xfstests' aio-dio tests write 512 bytes at a time): the bytes around
     * it stay, a direct and a buffered read see it, and it is on the device after a remount.
     */
    @Test
    void sectorAlignedDirectIoInsideABlockReadsBackEverywhere() throws IOException {
        assumeDirect();
        int block = blockSize();
        assumeTrue(block > 512, "the blocks are sectors");
        IomapFile buffered = create("/a");
        byte[] expected = writePattern(buffered, 0, 2 * block, 1);
        buffered.fsync();
        IomapFile file = direct("/a");
        byte[] middle = TestData.pattern(2, 512, 512);
        directWrite(file, 512, middle);
        System.arraycopy(middle, 0, expected, 512, 512);
        byte[] tail = TestData.pattern(3, 2L * block, 512);
        directWrite(file, 2L * block, tail);
        expected = Arrays.copyOf(expected, 2 * block + 512);
        System.arraycopy(tail, 0, expected, 2 * block, 512);
        assertThat(file.size()).isEqualTo(2L * block + 512);
        assertThat(directRead(file, 512, 512)).isEqualTo(middle);
        assertThat(directRead(file, 2L * block, 1024)).as("a direct read stops at EOF").isEqualTo(tail);
        assertContent(buffered, expected);
        remount();
        assertContent(open("/a"), expected);
    }

    @Test
    void directWritesReadBackDirectBufferedAndAfterRemount() throws IOException {
        assumeDirect();
        int block = blockSize();
        create("/a");
        IomapFile file = direct("/a");
        byte[] data = TestData.pattern(3, 0, 5 * block);
        directWrite(file, 0, data);
        assertThat(file.size()).isEqualTo(5L * block);
        assertBytes(directRead(file, 0, 5 * block), data, 0);
        assertBytes(directRead(file, block, 2 * block), Arrays.copyOfRange(data, block, 3 * block), block);
        assertContent(open("/a"), data);
        remountChecked();
        assertContent(open("/a"), data);
        assertBytes(directRead(direct("/a"), 0, 5 * block), data, 0);
    }

    @Test
    void aDirectReadSeesDirtyBufferedData() throws IOException {
        assumeDirect();
        int block = blockSize();
        IomapFile buffered = create("/a");
        byte[] model = writePattern(buffered, 0, 4 * block, 4);
        buffered.fsync();
        model = apply(model, block + 7, writePattern(buffered, block + 7, block, 5));   // dirty, not written back
        model = apply(model, 4L * block, writePattern(buffered, 4L * block, 3 * block, 6)); // dirty past old EOF
        assertBytes(directRead(direct("/a"), 0, 7 * block), model, 0);
    }

    @Test
    void bufferedReadsSeeDirectWritesOverCachedAndDirtyData() throws IOException {
        assumeDirect();
        int block = blockSize();
        IomapFile buffered = create("/a");
        byte[] model = writePattern(buffered, 0, 8 * block, 7);
        buffered.fsync();
        assertContent(buffered, model);                                      // all cached, clean
        model = apply(model, 5L * block + 3, writePattern(buffered, 5L * block + 3, 2 * block, 8)); // dirty
        byte[] fresh = TestData.pattern(9, block, 5 * block);
        directWrite(direct("/a"), block, fresh);
        model = apply(model, block, fresh);
        assertContent(buffered, model);
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void holesReadAsZeroesAndReadsStopAtEof() throws IOException {
        assumeDirect();
        int block = blockSize();
        IomapFile buffered = create("/a");
        byte[] tail = writePattern(buffered, 5L * block, block / 2 + 3, 10);  // blocks 0-4 are a hole
        buffered.fsync();
        dropCache();
        IomapFile file = direct("/a");
        byte[] expected = new byte[5 * block + block / 2 + 3];
        System.arraycopy(tail, 0, expected, 5 * block, tail.length);
        ByteBuffer dst = ByteBuffer.allocate(8 * block);
        Arrays.fill(dst.array(), TestData.STALE_MARKER);
        assertThat(file.read(0, dst)).isEqualTo(expected.length);
        assertBytes(Arrays.copyOf(dst.array(), expected.length), expected, 0);
        byte[] pastEof = Arrays.copyOfRange(dst.array(), expected.length, 6 * block);
        assertThat(pastEof).as("the rest of the last block, past EOF, is zeroed").containsOnly(0);
        assertThat(Arrays.copyOfRange(dst.array(), 6 * block, 8 * block)).as("the buffer past that is untouched")
                .containsOnly(TestData.STALE_MARKER);
        assertThat(file.read(6L * block, ByteBuffer.allocate(block))).as("read at EOF").isEqualTo(-1);
        assertThat(file.read(0, ByteBuffer.allocate(0))).isZero();
    }

    @Test
    void preallocatedSpaceReadsAsZeroesAndIsConvertedByDirectWrites() throws IOException {
        assumeDirect();
        assumeCapable(Capability.FALLOCATE);
        int block = blockSize();
        IomapFile buffered = create("/a");
        buffered.fallocate(FallocateMode.ALLOCATE, 0, 8L * block, false);
        IomapFile file = direct("/a");
        assertBytes(directRead(file, 0, 8 * block), new byte[8 * block], 0);
        byte[] data = TestData.pattern(11, 2L * block, 3 * block);
        directWrite(file, 2L * block, data);
        byte[] model = apply(new byte[8 * block], 2L * block, data);
        assertBytes(directRead(file, 0, 8 * block), model, 0);
        assertContent(buffered, model);
        file.fsync();
        remountChecked();
        assertContent(open("/a"), model);
        assertBytes(directRead(direct("/a"), 0, 8 * block), model, 0);
    }

    /**
     * A direct write whose source faults part way (a mapped file truncated under it) writes the whole
     * blocks before the fault and returns their count, as the kernel's direct write is built from the
     * user pages it could pin; one that faults at its first byte fails with {@link BadAddressException}
     * (EFAULT) and changes nothing. Before, the device met the fault itself.
     */
    @Test
    void aDirectWriteWhoseSourceFaultsWritesTheBlocksBeforeTheFault() throws IOException {
        assumeDirect();
        int page = FaultingBuffer.PAGE;
        assumeTrue(2L * page <= fs.maxFileSize(), "files are smaller than the write needs");
        IomapFile file = create("/a");
        IomapFile direct = direct("/a");
        byte[] data = TestData.pattern(21, 0, 2 * page);
        try (FaultingBuffer source = new FaultingBuffer(data, 0)) {
            ByteBuffer src = source.buffer();
            assertThatThrownBy(() -> direct.write(0, src)).isInstanceOf(BadAddressException.class)
                    .hasMessageContaining("EFAULT");
            assertThat(src.position()).isZero();
        }
        assertThat(file.size()).as("a direct write that kept nothing changed nothing").isZero();
        try (FaultingBuffer source = new FaultingBuffer(data, page)) {
            ByteBuffer src = source.buffer();
            assertThat(direct.write(0, src)).as("bytes written before the fault at byte %d", page).isEqualTo(page);
            assertThat(src.position()).isEqualTo(page);
        }
        byte[] model = Arrays.copyOf(data, page);
        assertThat(file.size()).isEqualTo(page);
        assertContent(file, model);
        assertBytes(directRead(direct, 0, page), model, 0);
        direct.fsync();
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void directWritesPastEofExtendTheFile() throws IOException {
        assumeDirect();
        int block = blockSize();
        IomapFile buffered = create("/a");
        byte[] model = writePattern(buffered, 0, block + 100, 12);      // a partial last block, cached
        IomapFile file = direct("/a");
        byte[] appended = TestData.pattern(13, 2L * block, 2 * block);
        directWrite(file, 2L * block, appended);
        model = apply(resize(model, 2L * block), 2L * block, appended);
        assertThat(file.size()).isEqualTo(4L * block);
        assertContent(buffered, model);
        byte[] far = TestData.pattern(14, 7L * block, block);
        directWrite(file, 7L * block, far);                           // leaves a hole
        model = apply(model, 7L * block, far);
        assertContent(buffered, model);
        file.fsync();
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void directWritesToClonedBlocksCopyOnWrite() throws IOException {
        assumeDirect();
        assumeCapable(Capability.CLONE);
        int block = blockSize();
        IomapFile source = create("/a");
        byte[] original = writePattern(source, 0, 6 * block, 15);
        source.fsync();
        IomapFile clone = create("/b");
        clone.cloneRange(source, 0, 0, 6L * block);
        byte[] fresh = TestData.pattern(16, 2L * block, 2 * block);
        directWrite(direct("/b"), 2L * block, fresh);
        byte[] model = apply(original.clone(), 2L * block, fresh);
        assertContent(clone, model);
        assertContent(source, original);
        assertBytes(directRead(direct("/a"), 0, 6 * block), original, 0);
        dropCache();
        remountChecked();
        assertContent(open("/a"), original);
        assertContent(open("/b"), model);
    }

    @Test
    void dsyncDirectWritesSurviveAPowerCut() throws IOException {
        assumeDirect();
        assumeCapable(Capability.DURABLE_FSYNC);
        int block = blockSize();
        PowerCutDevice power = new PowerCutDevice(kit().newFormattedDevice());
        IomapFileSystem crashing = kit().mount(power);
        byte[] model = TestData.pattern(17, 0, 3 * block);
        RamBlockDevice image;
        try {
            try (IomapFile created = crashing.create("/a")) {
                created.write(0, ByteBuffer.wrap(model));
                created.fsync();
            }
            try (IomapFile file = crashing.open("/a", EnumSet.of(OpenFlag.DIRECT, OpenFlag.DSYNC))) {
                byte[] over = TestData.pattern(18, block, block);
                directWrite(file, block, over);                     // an overwrite
                byte[] appended = TestData.pattern(19, 3L * block, 2 * block);
                directWrite(file, 3L * block, appended);            // extends the file: allocation and size
                model = apply(apply(model, block, over), 3L * block, appended);
            }
        } finally {
            image = power.cut(CutMode.LOSE_UNFLUSHED, null);
            try {
                crashing.close();
            } catch (IOException expected) {
                // The power is off.
            }
        }
        try (image) {
            try (IomapFileSystem recovered = kit().mount(image); IomapFile file = recovered.open("/a")) {
                assertContent(file, model);
            }
            assertThat(kit().fsck(image).problems()).isEmpty();
        }
    }

    @Test
    void aDirectOverwriteWritesExactlyItsBytes() throws IOException {
        assumeDirect();
        assumeTrue(!has(Capability.DATA_CHECKSUMS), kit().adapter().name()
                + " writes every overwrite as a new checksummed extent (its amplification is tested by its own tests)");
        int block = blockSize();
        IomapFile file = direct(createPath("/a"));
        directWrite(file, 0, TestData.pattern(20, 0, 8 * block));
        file.fsync();
        DeviceStats before = fs.stats().device();
        long appBefore = fs.stats().appBytesWritten();
        directWrite(file, 3L * block, TestData.pattern(21, 3L * block, 2 * block));
        DeviceStats done = fs.stats().device().minus(before);
        assertThat(done.dataBytesWritten()).as("device data bytes for a 2-block direct overwrite")
                .isEqualTo(2L * block);
        assertThat(done.bytesRead()).as("device bytes read by it").isZero();
        assertThat(fs.stats().appBytesWritten() - appBefore).isEqualTo(2L * block);
    }

    @Test
    void theModelCheckerMixesDirectAndBufferedOperations() throws IOException {
        assumeDirect();
        FsxRunner.Result result = FsxRunner.run(kit());
        assertThat(result.ops()).isEqualTo(kit().settings().fsxOps());
        assertThat(result.opCounts()).as("direct ops among the model checker's " + result.opCounts())
                .containsKeys("dread", "dwrite");
    }

    private String createPath(String path) throws IOException {
        create(path);
        return path;
    }

    @Test
    void directWritersOfDisjointRangesRunTogether() throws Exception {
        assumeDirect();
        int block = blockSize();
        int writers = 4;
        int blocksEach = 4;
        int rounds = 8;
        IomapFile file = direct(createPath("/a"));
        directWrite(file, 0, new byte[writers * blocksEach * block]);
        file.fsync();
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                long base = (long) w * blocksEach * block;
                int writer = w;
                done.add(pool.submit(() -> {
                    for (int round = 0; round < rounds; round++) {
                        long pos = base + (long) (round % blocksEach) * block;
                        directWrite(file, pos, TestData.pattern(100 + writer * rounds + round, pos, block));
                        byte[] back = directRead(file, pos, block);
                        assertBytes(back, TestData.pattern(100 + writer * rounds + round, pos, block), pos);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        byte[] model = new byte[writers * blocksEach * block];
        for (int w = 0; w < writers; w++) {
            for (int round = rounds - blocksEach; round < rounds; round++) {
                long pos = (long) w * blocksEach * block + (long) (round % blocksEach) * block;
                model = apply(model, pos, TestData.pattern(100 + w * rounds + round, pos, block));
            }
        }
        assertContent(open("/a"), model);
        remountChecked();
        assertContent(open("/a"), model);
    }
}
