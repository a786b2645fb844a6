package dev.iomap.core;

import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.mm.Folio;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Uncached buffered I/O ({@code RWF_DONTCACHE}, Linux 6.14): the folios an uncached read or write
 * brings into the cache leave it once copied from or written back; folios cached before stay.
 */
class UncachedIoTest {
    private static final int K1 = 1024;
    private static final int K4 = 4096;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice device = new RamBlockDevice(K1, 16L << 20);
    private final IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(2).build(), device);

    private CachedInode inode(long size) {
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        return cache.addInode(1, K1, size, MAX, mapping, mapping);
    }

    private byte[] read(OpenFile file, long pos, int length, boolean uncached) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(length);
        while (dst.hasRemaining() && file.read(pos + dst.position(), dst, uncached) > 0) {
            // until full or EOF
        }
        return dst.array();
    }

    private List<Folio> cached(CachedInode inode) {
        return inode.pageCache().foliosIn(0, Long.MAX_VALUE);
    }

    @Test
    void anUncachedReadLeavesNothingInTheCache() throws Exception {
        device.write(0, ByteBuffer.wrap(pattern(1, 0, 64 * K1)), IoPurpose.DATA).join();
        CachedInode inode = inode(64 * K1);
        OpenFile file = inode.open();

        assertThat(read(file, 0, 64 * K1, true)).isEqualTo(pattern(1, 0, 64 * K1));

        assertThat(cached(inode)).isEmpty();
        assertThat(device.stats().bytesRead()).isEqualTo(64 * K1);
    }

    @Test
    void anUncachedReadKeepsTheFoliosCachedBeforeIt() throws Exception {
        device.write(0, ByteBuffer.wrap(pattern(2, 0, 64 * K1)), IoPurpose.DATA).join();
        CachedInode inode = inode(64 * K1);
        OpenFile file = inode.open();
        assertThat(read(file, 8 * K1, 8 * K1, false)).isEqualTo(pattern(2, 8 * K1, 8 * K1));
        List<Folio> before = cached(inode);
        assertThat(before).isNotEmpty();

        assertThat(read(file, 0, 64 * K1, true)).isEqualTo(pattern(2, 0, 64 * K1));

        assertThat(cached(inode)).containsExactlyElementsOf(before);
    }

    @Test
    void aCachedReadOfAFolioKeepsIt() throws Exception {
        device.write(0, ByteBuffer.wrap(pattern(3, 0, 16 * K1)), IoPurpose.DATA).join();
        CachedInode inode = inode(16 * K1);
        OpenFile file = inode.open();
        assertThat(read(file, 0, K4, false)).isEqualTo(pattern(3, 0, K4));
        Folio folio = inode.pageCache().lookup(0);

        assertThat(read(file, 0, K4, true)).isEqualTo(pattern(3, 0, K4));

        assertThat(inode.pageCache().lookup(0)).isSameAs(folio);
    }

    @Test
    void anUncachedWriteIsWrittenBackAndLeavesNothingInTheCache() throws Exception {
        CachedInode inode = inode(0);
        OpenFile file = inode.open();

        assertThat(file.write(0, buffer(4, 0, 40 * K1), true)).isEqualTo(40 * K1);

        assertThat(cached(inode)).isEmpty();
        assertThat(inode.pageCache().hasDirty()).isFalse();
        assertThat(readDevice(device, 0, 40 * K1)).isEqualTo(pattern(4, 0, 40 * K1));
        assertThat(read(file, 0, 40 * K1, false)).isEqualTo(pattern(4, 0, 40 * K1));
        assertThat(cached(inode)).isNotEmpty();
    }

    @Test
    void anUncachedWriteKeepsTheFolioCachedBeforeIt() throws Exception {
        CachedInode inode = inode(0);
        OpenFile file = inode.open();
        file.write(0, buffer(5, 0, K4));
        file.fsync();
        Folio first = inode.pageCache().lookup(0);

        file.write(0, buffer(6, 0, 16 * K1), true);

        assertThat(cached(inode)).containsExactly(first);
        assertThat(first.isDirty()).isFalse();
        assertThat(readDevice(device, 0, 16 * K1)).isEqualTo(pattern(6, 0, 16 * K1));
        assertThat(read(file, 0, 16 * K1, true)).isEqualTo(pattern(6, 0, 16 * K1));
        assertThat(cached(inode)).containsExactly(first);
    }

    @Test
    void aCachedWriteAfterAnUncachedOneStaysCachedAfterItsWriteback() throws Exception {
        CachedInode inode = inode(0);
        OpenFile file = inode.open();
        file.write(0, buffer(7, 0, K4), true);
        assertThat(cached(inode)).isEmpty();
        file.write(K1, buffer(8, 0, K1));   // a cached write: the folio it creates stays
        Folio folio = inode.pageCache().lookup(0);

        file.fsync();

        assertThat(cached(inode)).containsExactly(folio);
        byte[] expected = pattern(7, 0, K4);
        System.arraycopy(pattern(8, 0, K1), 0, expected, K1, K1);
        assertThat(read(file, 0, K4, false)).isEqualTo(expected);
    }
}
