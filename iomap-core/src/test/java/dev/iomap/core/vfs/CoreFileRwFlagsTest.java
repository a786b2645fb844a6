package dev.iomap.core.vfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.RwFlag;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Per-call flags through the API: {@link RwFlag#DONTCACHE} on a mounted filesystem. */
class CoreFileRwFlagsTest {
    private static final int K1 = 1024;
    private static final Set<RwFlag> DONTCACHE = Set.of(RwFlag.DONTCACHE);

    private final RamBlockDevice device = new RamBlockDevice(K1, 8L << 20);

    private IomapFileSystem mount() throws Exception {
        SnapAdapter adapter = new SnapAdapter();
        adapter.format(device, FormatOptions.blockSize(K1));
        return CoreRuntime.mount(adapter, device,
                new MountOptions(PageCacheOptions.builder().maxFolioOrder(2).build(), false));
    }

    @Test
    void uncachedWritesAndReadsLeaveTheFilesDataOutOfTheCache() throws Exception {
        byte[] data = pattern(1, 0, 48 * K1);
        try (IomapFileSystem fs = mount(); IomapFile file = fs.create("/f")) {
            file.fsync();
            long before = fs.cacheStatus().cachedBytes();

            assertThat(file.write(0, ByteBuffer.wrap(data), DONTCACHE)).isEqualTo(data.length);
            assertThat(fs.cacheStatus().cachedBytes()).isEqualTo(before);
            ByteBuffer dst = ByteBuffer.allocate(data.length);
            while (dst.hasRemaining() && file.read(dst.position(), dst, DONTCACHE) > 0) {
                // until full
            }

            assertThat(dst.array()).isEqualTo(data);
            assertThat(fs.cacheStatus().cachedBytes()).isEqualTo(before);
            assertThat(fs.cacheStatus().dirtyBytes()).isZero();
        }
    }

    @Test
    void aFileWithoutFlagSupportRefusesAnyFlag() {
        IomapFile plain = new IomapFile() {
            @Override public long ino() { return 1; }
            @Override public long size() { return 0; }
            @Override public int read(long pos, ByteBuffer dst) { return -1; }
            @Override public int write(long pos, ByteBuffer src) { return 0; }
            @Override public void truncate(long size) { }
            @Override public void fallocate(dev.iomap.api.FallocateMode mode, long o, long l, boolean k) { }
            @Override public void unshare(long offset, long length) { }
            @Override public void cloneRange(IomapFile s, long so, long d, long l) { }
            @Override public void fsync() { }
            @Override public void fdatasync() { }
            @Override public dev.iomap.api.MappedFile map() { return null; }
            @Override public dev.iomap.api.FileStat stat() throws IOException { throw new IOException("none"); }
            @Override public void close() { }
        };

        assertThatThrownBy(() -> plain.read(0, ByteBuffer.allocate(1), DONTCACHE))
                .isInstanceOf(NotSupportedException.class).hasMessageContaining("DONTCACHE");
        assertThatThrownBy(() -> plain.write(0, ByteBuffer.allocate(1), DONTCACHE))
                .isInstanceOf(NotSupportedException.class).hasMessageContaining("DONTCACHE");
    }
}
