package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.WriteOps;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link WriteOps#putFolio} is shown exactly the whole
 * blocks holding what each folio accepted, with the partial edge blocks as read or zeroed, and is
 * paired with every {@code getFolio}; a failing {@code putFolio} keeps its bytes and fails the write.
 * 4 KiB single-page folios, 1 KiB blocks, new folios poisoned so that unzeroed bytes would show.
 */
class PutFolioBytesTest {
    private static final int K1 = 1024;
    private static final long BASE = 1L << 20;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice ram = new RamBlockDevice(K1, 16L << 20);
    private final List<String> events = new ArrayList<>();
    private final IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(0)
            .poisonNewFolios(true).build(), new JdataTestOps.Device(ram, events));
    private final JdataTestOps ops = new JdataTestOps(K1, BASE, events);
    private final CachedInode inode = cache.addInode(1, K1, 0, MAX, ops, ops);
    private final OpenFile file = inode.open();

    @AfterEach
    void closeCache() {
        cache.close();
    }

    private static void assertPut(JdataTestOps.Put put, long pos, int copied, long blocksPos, byte[] blocks) {
        assertThat(put.pos()).as("pos").isEqualTo(pos);
        assertThat(put.copied()).as("copied").isEqualTo(copied);
        assertThat(put.blocksPos()).as("blocks start").isEqualTo(blocksPos);
        assertThat(put.blocks()).as("blocks").isEqualTo(blocks);
        assertThat(put.readOnly()).as("read-only").isTrue();
    }

    /** Writes {@code base} over the start of the file, writes it back and drops it from the cache. */
    private byte[] onDeviceOnly(int seed, int length) throws IOException {
        byte[] base = pattern(seed, 0, length);
        file.write(0, ByteBuffer.wrap(base));
        file.fsync();
        cache.dropCleanCache();
        assertThat(inode.pageCache().lookup(0)).isNull();
        ops.clear();
        return base;
    }

    private static byte[] put(byte[] model, long pos, byte[] data) {
        byte[] out = Arrays.copyOf(model, Math.max(model.length, (int) pos + data.length));
        System.arraycopy(data, 0, out, (int) pos, data.length);
        return out;
    }

    @Test
    void aBlockAlignedWriteShowsExactlyItsBlocks() throws Exception {
        file.write(K1, buffer(1, K1, 2 * K1));

        assertThat(ops.puts()).hasSize(1);
        assertPut(ops.puts().get(0), K1, 2 * K1, K1, pattern(1, K1, 2 * K1));
    }

    @Test
    void anUnalignedWriteShowsItsEdgeBlockAsReadFromTheDevice() throws Exception {
        byte[] base = onDeviceOnly(2, 8 * K1);
        byte[] data = pattern(3, 1500, 100);

        file.write(1500, ByteBuffer.wrap(data));

        byte[] model = put(base, 1500, data);
        assertThat(ops.puts()).hasSize(1);
        assertPut(ops.puts().get(0), 1500, 100, K1, Arrays.copyOfRange(model, K1, 2 * K1));
    }

    @Test
    void anUnalignedWriteIntoANewBlockShowsZeroesAroundItsBytes() throws Exception {
        byte[] data = pattern(4, 300, 100);

        file.write(300, ByteBuffer.wrap(data));

        assertThat(ops.puts()).hasSize(1);
        assertPut(ops.puts().get(0), 300, 100, 0, put(new byte[K1], 300, data));
    }

    @Test
    void aWriteSpanningTwoFoliosShowsEachFolioItsOwnBlocks() throws Exception {
        byte[] base = onDeviceOnly(5, 8 * K1);
        byte[] data = pattern(6, 4000, 200);

        file.write(4000, ByteBuffer.wrap(data));

        byte[] model = put(base, 4000, data);
        assertThat(events).containsExactly("get 4000 96", "put 4000 96", "get 4096 104", "put 4096 104");
        assertPut(ops.puts().get(0), 4000, 96, 3 * K1, Arrays.copyOfRange(model, 3 * K1, 4 * K1));
        assertPut(ops.puts().get(1), 4096, 104, 4 * K1, Arrays.copyOfRange(model, 4 * K1, 5 * K1));
    }

    @Test
    void aShortCopyIntoAnUptodateFolioShowsTheBlocksOfWhatWasKept() throws Exception {
        byte[] base = pattern(7, 0, 8 * K1);
        file.write(0, ByteBuffer.wrap(base));
        ops.clear();
        byte[] data = pattern(8, 100, 2000);

        long written = file.write(100, TestIo.shortSource(data, 1000), 2000);

        assertThat(written).isEqualTo(1000);
        byte[] model = put(base, 100, Arrays.copyOf(data, 1000));
        assertThat(ops.puts()).hasSize(1);
        // [100, 1100) touches blocks 0 and 1.
        assertPut(ops.puts().get(0), 100, 1000, 0, Arrays.copyOf(model, 2 * K1));
    }

    /**
     * write_end refuses the short copy (the folio is not uptodate): that folio is put with nothing, then
     * got again for just the bytes copied, which are kept and shown with their blocks (the kernel's
     * retry in {@code iomap_write_iter}).
     */
    @Test
    void aShortCopyIntoAFolioNotUptodateIsPutWithNothingThenAgainWithWhatItCopied() throws Exception {
        byte[] base = onDeviceOnly(9, 8 * K1);
        byte[] data = pattern(10, 0, 2000);

        long written = file.write(4096 + 100, TestIo.shortSource(data, 1000), 2000);

        assertThat(written).isEqualTo(1000);
        assertThat(events).containsExactly("get 4196 2000", "put 4196 0", "get 4196 1000", "put 4196 1000");
        assertPut(ops.puts().get(0), 4196, 0, 4096, new byte[0]);
        byte[] model = put(base, 4196, Arrays.copyOf(data, 1000));
        // [4196, 5196) touches the folio's blocks 0 and 1.
        assertPut(ops.puts().get(1), 4196, 1000, 4096, Arrays.copyOfRange(model, 4096, 4096 + 2 * K1));
    }

    @Test
    void aStaleMappingStillGetsAPutFolioForItsGetFolio() throws Exception {
        ops.staleOnce();

        file.write(0, buffer(11, 0, K1));

        assertThat(events).containsExactly("get 0 1024", "put 0 0", "get 0 1024", "put 0 1024");
        assertPut(ops.puts().get(1), 0, K1, 0, pattern(11, 0, K1));
    }

    @Test
    void aFailingPutFolioKeepsItsBytesAndFailsTheWriteAfterThatFolio() throws Exception {
        IOException full = new IOException("transaction full");
        ops.failPutAt(4096, full);
        byte[] data = pattern(12, 0, 3 * 4096);
        ByteBuffer src = ByteBuffer.wrap(data);

        assertThatThrownBy(() -> file.write(0, src)).isSameAs(full);

        assertThat(events).containsExactly("get 0 4096", "put 0 4096", "get 4096 4096", "put 4096 4096");
        assertThat(src.position()).isEqualTo(2 * 4096);
        assertThat(inode.size()).isEqualTo(2 * 4096);
        assertThat(read(file, 0, 3 * 4096)).isEqualTo(Arrays.copyOf(data, 2 * 4096));
        // end() was told both folios were written, so their blocks were kept and can be written back.
        file.fsync();
        assertThat(readDevice(ram, BASE, 2 * 4096)).isEqualTo(Arrays.copyOf(data, 2 * 4096));
    }

    @Test
    void aFailingGetFolioGetsNoPutFolioAndEndLearnsTheFoliosWrittenBeforeIt() throws Exception {
        IOException busy = new IOException("no transaction");
        ops.failGetAt(4096, busy);
        byte[] data = pattern(14, 0, 3 * 4096);

        assertThatThrownBy(() -> file.write(0, ByteBuffer.wrap(data))).isSameAs(busy);

        assertThat(events).containsExactly("get 0 4096", "put 0 4096", "get 4096 4096");
        assertThat(inode.size()).isEqualTo(4096);
        file.fsync();
        assertThat(readDevice(ram, BASE, 4096)).isEqualTo(Arrays.copyOf(data, 4096));
    }

    @Test
    void anAdapterThatNeverAsksForTheBytesStillSeesEveryFolio() throws Exception {
        List<String> calls = new ArrayList<>();
        WriteOps noBytes = new WriteOps() {
            @Override
            public void putFolio(IomapInode inode, long pos, int copied, Iomap iomap,
                    java.util.function.Supplier<ByteBuffer> blocks) {
                calls.add(pos + " " + copied);
            }
        };
        BlockDeviceMapping raw = new BlockDeviceMapping(ram);
        IomapOps withHooks = new IomapOps() {
            @Override
            public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request)
                    throws IOException {
                return raw.begin(inode, pos, length, request);
            }

            @Override
            public WriteOps writeOps() {
                return noBytes;
            }
        };
        CachedInode other = cache.addInode(2, K1, 0, MAX, withHooks, raw);

        other.open().write(4000, buffer(13, 4000, 200));

        // The file was empty: zeroing [0, 4000) (mapped blocks here) goes through the hooks too.
        assertThat(calls).containsExactly("0 4000", "4000 96", "4096 104");
    }

    @Test
    void writeOpsHasOnePutFolioForTheCoreToCall() {
        assertThat(java.util.Arrays.stream(WriteOps.class.getMethods()).map(java.lang.reflect.Method::getName)
                .filter("putFolio"::equals)).hasSize(1);
    }

    @Test
    void theBytesAreShownOnlyWhilePutFolioRuns() throws Exception {
        List<java.util.function.Supplier<ByteBuffer>> kept = new ArrayList<>();
        WriteOps keeper = new WriteOps() {
            @Override
            public void putFolio(IomapInode inode, long pos, int copied, Iomap iomap,
                    java.util.function.Supplier<ByteBuffer> blocks) {
                assertThat(blocks.get().remaining()).isEqualTo(K1);
                kept.add(blocks);
            }
        };
        BlockDeviceMapping raw = new BlockDeviceMapping(ram);
        IomapOps withHooks = new IomapOps() {
            @Override
            public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request)
                    throws IOException {
                return raw.begin(inode, pos, length, request);
            }

            @Override
            public WriteOps writeOps() {
                return keeper;
            }
        };
        CachedInode other = cache.addInode(2, K1, 0, MAX, withHooks, raw);

        other.open().write(0, buffer(14, 0, K1));

        assertThat(kept).hasSize(1);
        assertThatThrownBy(() -> kept.get(0).get()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("only while it runs");
    }
}
