package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.mm.Folio;
import dev.iomap.device.DeviceStats;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Files whose data lives inline in the adapter's metadata ({@code INLINE} mappings, gfs2's stuffed
 * files): reads fill from the inline buffer, writes, zeroing and mapped stores go through to it, the
 * cache never holds them dirty, and unstuffing hands over to ordinary blocks with the cached bytes
 * intact. The adapter is {@link StuffedTestOps}.
 */
class InlineDataTest {
    private static final int K1 = 1024;
    /** The stuffed limit: a 1 KiB dinode block less a 24-byte header, not block aligned. */
    private static final int LIMIT = K1 - 24;
    private static final long BASE = 64 * K1;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice device = new RamBlockDevice(K1, 16L << 20);
    private final IomapCache cache = new IomapCache(
            PageCacheOptions.builder().poisonNewFolios(true).maxFolioOrder(4).build(), device);

    @AfterEach
    void closeCache() {
        cache.close();
    }

    private CachedInode stuffedFile(long ino, StuffedTestOps ops) {
        return cache.addInode(ino, K1, 0, MAX, ops, ops);
    }

    private static ByteBuffer bytes(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (seed * 31 + i * 7 + 1);
        }
        return ByteBuffer.wrap(b);
    }

    private static byte[] apply(byte[] model, long pos, ByteBuffer src) {
        byte[] data = new byte[src.remaining()];
        src.duplicate().get(data);
        byte[] out = Arrays.copyOf(model, Math.max(model.length, (int) pos + data.length));
        System.arraycopy(data, 0, out, (int) pos, data.length);
        return out;
    }

    @Test
    void aStuffedFileWrittenAtEveryOffsetUpToTheLimitAndOnePastItMatchesTheModel() throws Exception {
        byte[] initial = pattern(1, 0, LIMIT / 2);
        for (int pos = 0; pos <= LIMIT; pos++) {
            StuffedTestOps ops = new StuffedTestOps(device, K1, LIMIT, BASE);
            CachedInode inode = stuffedFile(pos + 1, ops);
            OpenFile file = inode.open();
            file.write(0, ByteBuffer.wrap(initial));
            ByteBuffer one = ByteBuffer.wrap(new byte[] {(byte) (pos | 1)});
            byte[] model = apply(initial, pos, one);

            file.write(pos, one);

            String where = "write at " + pos;
            assertThat(ops.isStuffed()).as(where).isEqualTo(pos < LIMIT);
            assertThat(read(file, 0, model.length + 10)).as(where).isEqualTo(model);
            assertThat(read(file, pos, 1)).as(where).containsExactly((byte) (pos | 1));
            if (pos < LIMIT) {
                assertThat(ops.persisted(model.length)).as(where).isEqualTo(model);
                assertThat(ops.persistedSize()).as(where).isEqualTo(model.length);
                cache.dropCleanCache();
                assertThat(read(file, 0, model.length)).as(where + ", read again from the inline buffer")
                        .isEqualTo(model);
            } else {
                file.fsync();
                cache.dropCleanCache();
                assertThat(read(file, 0, model.length)).as(where + ", read again from the device")
                        .isEqualTo(model);
            }
            cache.removeInode(pos + 1);
        }
    }

    @Test
    void writesOfEveryLengthInAnyOrderMatchTheModelAndNeverDirtyTheCache() throws Exception {
        StuffedTestOps ops = new StuffedTestOps(device, K1, LIMIT, BASE);
        CachedInode inode = stuffedFile(1, ops);
        OpenFile file = inode.open();
        byte[] model = new byte[0];
        DeviceStats before = device.stats();
        for (int i = 0; i < LIMIT; i++) {
            int pos = (i * 37) % LIMIT;
            ByteBuffer src = bytes(Math.min(1 + i % 17, LIMIT - pos), i);
            model = apply(model, pos, src);
            file.write(pos, src);

            assertThat(read(file, 0, LIMIT)).as("write %d at %d", i, pos).isEqualTo(model);
            assertThat(inode.pageCache().hasDirty()).isFalse();
            if (i % 64 == 0) {
                cache.dropCleanCache();
            }
        }
        file.fsync();

        assertThat(ops.isStuffed()).isTrue();
        assertThat(ops.persisted(model.length)).isEqualTo(model);
        assertThat(ops.mapBlocksCalls()).isZero();
        DeviceStats done = device.stats().minus(before);
        assertThat(done.writes()).isZero();
        assertThat(done.reads()).isZero();
    }

    @Test
    void aPartialWriteFillsTheFolioFromInlineDataAndZeroesPastEofNotJunk() throws Exception {
        StuffedTestOps ops = new StuffedTestOps(device, K1, LIMIT, BASE);
        CachedInode inode = stuffedFile(1, ops);
        OpenFile file = inode.open();
        file.write(0, ByteBuffer.wrap(pattern(2, 0, 300)));
        cache.dropCleanCache();

        file.write(100, ByteBuffer.wrap(new byte[] {9}));

        Folio folio = inode.pageCache().lookup(0);
        assertThat(folio.isUptodate()).isTrue();
        assertThat(folio.isDirty()).isFalse();
        byte[] cached = folio.memory().asSlice(0, K1).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        byte[] expected = new byte[K1];
        System.arraycopy(pattern(2, 0, 300), 0, expected, 0, 300);
        expected[100] = 9;
        assertThat(cached).isEqualTo(expected);
    }

    @Test
    void aMappedStoreIntoAStuffedFileGoesThroughToTheInlineBuffer() throws Exception {
        StuffedTestOps ops = new StuffedTestOps(device, K1, LIMIT, BASE);
        CachedInode inode = stuffedFile(1, ops);
        OpenFile file = inode.open();
        file.write(0, ByteBuffer.wrap(pattern(3, 0, 500)));
        int persistsBefore = ops.persists();

        inode.map().store(100, ByteBuffer.wrap(new byte[] {1, 2, 3}));

        byte[] model = pattern(3, 0, 500);
        model[100] = 1;
        model[101] = 2;
        model[102] = 3;
        assertThat(ops.persists()).isEqualTo(persistsBefore + 1);
        assertThat(ops.persisted(500)).isEqualTo(model);
        assertThat(inode.pageCache().hasDirty()).isFalse();
        file.fsync();
        assertThat(device.stats().writes()).isZero();
        cache.dropCleanCache();
        assertThat(read(file, 0, 600)).isEqualTo(model);
        assertThat(ops.isStuffed()).isTrue();
    }

    @Test
    void truncateDownAndUpInsideTheLimitZeroesThroughTheInlineBuffer() throws Exception {
        StuffedTestOps ops = new StuffedTestOps(device, K1, LIMIT, BASE);
        CachedInode inode = stuffedFile(1, ops);
        OpenFile file = inode.open();
        file.write(0, ByteBuffer.wrap(pattern(4, 0, LIMIT)));

        file.truncate(300);
        assertThat(read(file, 0, LIMIT)).isEqualTo(pattern(4, 0, 300));
        assertThat(Arrays.copyOfRange(ops.persisted(LIMIT), 300, LIMIT)).isEqualTo(new byte[LIMIT - 300]);
        file.truncate(800);
        inode.zeroRange(50, 20);

        byte[] expected = Arrays.copyOf(pattern(4, 0, 300), 800);
        Arrays.fill(expected, 50, 70, (byte) 0);
        assertThat(read(file, 0, LIMIT)).isEqualTo(expected);
        cache.dropCleanCache();
        assertThat(read(file, 0, LIMIT)).isEqualTo(expected);
        assertThat(ops.persisted(800)).isEqualTo(expected);
        file.fsync();
        assertThat(ops.isStuffed()).isTrue();
        assertThat(device.stats().writes()).isZero();
    }

    @Test
    void truncateUpPastTheLimitUnstuffsAndKeepsTheData() throws Exception {
        StuffedTestOps ops = new StuffedTestOps(device, K1, LIMIT, BASE);
        CachedInode inode = stuffedFile(1, ops);
        OpenFile file = inode.open();
        file.write(0, ByteBuffer.wrap(pattern(5, 0, 700)));

        file.truncate(3 * K1);
        file.fsync();
        cache.dropCleanCache();

        assertThat(ops.isStuffed()).isFalse();
        assertThat(read(file, 0, 4 * K1)).isEqualTo(Arrays.copyOf(pattern(5, 0, 700), 3 * K1));
    }

    @Test
    void unstuffingPutsTheDataWhereTheAdapterMovedItAndTheCacheStaysRight() throws Exception {
        StuffedTestOps ops = new StuffedTestOps(device, K1, LIMIT, BASE);
        CachedInode inode = stuffedFile(1, ops);
        OpenFile file = inode.open();
        byte[] stuffed = pattern(6, 0, LIMIT);
        file.write(0, ByteBuffer.wrap(stuffed));
        assertThat(device.stats().writes()).isZero();

        ByteBuffer crossing = bytes(40, 6);
        byte[] model = apply(stuffed, LIMIT - 10, crossing);
        file.write(LIMIT - 10, crossing);

        assertThat(ops.isStuffed()).isFalse();
        byte[] moved = Arrays.copyOf(stuffed, K1);
        assertThat(ops.moved()).isEqualTo(moved);
        assertThat(readDevice(device, BASE, K1)).isEqualTo(moved);
        assertThat(read(file, 0, 2 * K1)).isEqualTo(model);
        assertThat(inode.pageCache().hasDirty()).isTrue();
        file.fsync();
        assertThat(ops.mapBlocksCalls()).isPositive();
        assertThat(readDevice(device, BASE, 2 * K1)).isEqualTo(Arrays.copyOf(model, 2 * K1));
        cache.dropCleanCache();
        assertThat(read(file, 0, 2 * K1)).isEqualTo(model);
    }

    @Test
    void aShortCopyIntoAStuffedFileWritesThroughWhatItCopied() throws Exception {
        StuffedTestOps ops = new StuffedTestOps(device, K1, LIMIT, BASE);
        CachedInode inode = stuffedFile(1, ops);
        OpenFile file = inode.open();
        file.write(0, ByteBuffer.wrap(pattern(7, 0, 200)));

        long written = file.write(10, TestIo.shortSource(pattern(8, 0, 100), 40), 100);

        byte[] model = pattern(7, 0, 200);
        System.arraycopy(pattern(8, 0, 40), 0, model, 10, 40);
        assertThat(written).isEqualTo(40);
        assertThat(ops.persisted(200)).isEqualTo(model);
        cache.dropCleanCache();
        assertThat(read(file, 0, 300)).isEqualTo(model);
    }

    @Test
    void aStuffedFileIsAllDataToSeek() throws Exception {
        StuffedTestOps ops = new StuffedTestOps(device, K1, LIMIT, BASE);
        CachedInode inode = stuffedFile(1, ops);
        inode.open().write(0, ByteBuffer.wrap(pattern(9, 0, 600)));

        assertThat(inode.seekData(123)).isEqualTo(123);
        assertThat(inode.seekHole(0)).isEqualTo(600);
    }
}
