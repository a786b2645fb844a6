package dev.iomap.core;

import static dev.iomap.core.TestIo.read;
import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.ReadOps;
import dev.iomap.spi.WritebackContext;
import dev.iomap.spi.WritebackIoend;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The adapter's I/O hooks: {@link ReadOps#readFolioRange} (the kernel's {@code iomap_read_ops}) and
 * {@link WritebackOps#writebackSubmit} (its {@code ->writeback_submit}). The adapter here stores every
 * byte XORed with {@value #KEY}, so the bytes on the device are never the file's: only an adapter
 * whose hooks run on every read and every write gives the file back.
 */
class AdapterIoHooksTest {
    private static final int K1 = 1024;
    private static final int KEY = 0x5a;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice device = new RamBlockDevice(K1, 4L << 20);

    /** Identity mapping whose reads and writes go through an XOR "codec". */
    private static final class XorAdapter implements IomapOps, WritebackOps, ReadOps {
        private final BlockDeviceMapping identity;
        private final BlockDevice device;
        final List<Long> reads = new ArrayList<>();
        final List<IoendCompletion> completions = new ArrayList<>();
        IOException failNextRead;
        IOException failNextSubmit;

        XorAdapter(BlockDevice device) {
            identity = new BlockDeviceMapping(device);
            this.device = device;
        }

        @Override
        public IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request)
                throws IOException {
            return identity.begin(inode, pos, length, request);
        }

        @Override
        public long writebackRange(WritebackContext wpc, long pos, long length, long endPos) throws IOException {
            return identity.writebackRange(wpc, pos, length, endPos);
        }

        @Override
        public ReadOps readOps() {
            return this;
        }

        @Override
        public synchronized void readFolioRange(IomapInode inode, Iomap iomap, long pos, ByteBuffer dst,
                BlockDevice dev) throws IOException {
            reads.add(pos);
            if (failNextRead != null) {
                IOException e = failNextRead;
                failNextRead = null;
                throw e;
            }
            ByteBuffer raw = ByteBuffer.allocate(dst.remaining());
            dev.read(iomap.deviceAddress(pos), raw);
            for (int i = 0; i < raw.capacity(); i++) {
                dst.put((byte) (raw.get(i) ^ KEY));
            }
        }

        @Override
        public CompletableFuture<Void> writebackSubmit(IomapInode inode, WritebackIoend submitted) {
            Iomap ioend = submitted.range();
            List<ByteBuffer> data = submitted.data();
            if (failNextSubmit != null) {
                IOException e = failNextSubmit;
                failNextSubmit = null;
                return CompletableFuture.failedFuture(e);
            }
            ByteBuffer encoded = ByteBuffer.allocate((int) ioend.length());
            for (ByteBuffer part : data) {
                for (int i = part.position(); i < part.limit(); i++) {
                    encoded.put((byte) (part.get(i) ^ KEY));
                }
            }
            return device.write(ioend.deviceAddress(ioend.offset()), encoded.flip(), IoPurpose.DATA);
        }

        @Override
        public synchronized void ioendCompleted(IomapInode inode, IoendCompletion completion) {
            completions.add(completion);
        }
    }

    private static byte[] xor(byte[] bytes) {
        byte[] out = bytes.clone();
        for (int i = 0; i < out.length; i++) {
            out[i] ^= (byte) KEY;
        }
        return out;
    }

    private OpenFile open(XorAdapter adapter, long size) throws IOException {
        IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(2).build(), device);
        return cache.addInode(1, K1, size, MAX, adapter, adapter).open();
    }

    @Test
    void writebackGoesThroughSubmitIoendAndReadsThroughReadFolioRange() throws Exception {
        XorAdapter adapter = new XorAdapter(device);
        OpenFile writer = open(adapter, 0);
        writer.write(0, ByteBuffer.wrap(pattern(1, 0, 8 * K1)));
        writer.fsync();

        assertThat(readDevice(device, 0, 8 * K1)).isEqualTo(xor(pattern(1, 0, 8 * K1)));
        assertThat(adapter.completions).extracting(IoendCompletion::error).containsOnlyNulls();
        assertThat(adapter.completions.stream().mapToLong(IoendCompletion::length).sum()).isEqualTo(8 * K1);

        XorAdapter reader = new XorAdapter(device);
        assertThat(read(open(reader, 8 * K1), 0, 8 * K1)).isEqualTo(pattern(1, 0, 8 * K1));
        assertThat(reader.reads).isNotEmpty();
    }

    @Test
    void aWritesPartialEdgeBlockIsReadThroughReadFolioRange() throws Exception {
        device.write(0, ByteBuffer.wrap(xor(pattern(2, 0, 4 * K1))), IoPurpose.DATA).join();
        XorAdapter adapter = new XorAdapter(device);
        OpenFile file = open(adapter, 4 * K1);

        file.write(K1 + 100, ByteBuffer.wrap(pattern(3, K1 + 100, 10)));
        file.fsync();

        assertThat(adapter.reads).containsExactly((long) K1);
        byte[] expected = pattern(2, 0, 4 * K1);
        System.arraycopy(pattern(3, K1 + 100, 10), 0, expected, K1 + 100, 10);
        assertThat(xor(readDevice(device, 0, 4 * K1))).isEqualTo(expected);
    }

    @Test
    void aReadFolioRangeFailureFailsTheReadAndNothingBecomesUptodate() throws Exception {
        device.write(0, ByteBuffer.wrap(xor(pattern(4, 0, 4 * K1))), IoPurpose.DATA).join();
        XorAdapter adapter = new XorAdapter(device);
        OpenFile file = open(adapter, 4 * K1);
        IOException bad = new IOException("checksum mismatch");
        adapter.failNextRead = bad;

        assertThatThrownBy(() -> read(file, 0, 4 * K1)).isSameAs(bad);
        int readsAfterFailure = adapter.reads.size();

        assertThat(read(file, 0, 4 * K1)).isEqualTo(pattern(4, 0, 4 * K1));
        assertThat(adapter.reads.size()).isGreaterThan(readsAfterFailure);
    }

    @Test
    void aFailedSubmitIsSeenByIoendCompletedAndReportedAtFsync() throws Exception {
        XorAdapter adapter = new XorAdapter(device);
        OpenFile file = open(adapter, 0);
        IOException bad = new IOException("no space for the compressed extent");
        adapter.failNextSubmit = bad;
        file.write(0, ByteBuffer.wrap(pattern(5, 0, K1)));

        assertThatThrownBy(file::fsync).isInstanceOf(IOException.class)
                .satisfies(e -> assertThat(e == bad || e.getCause() == bad).isTrue());
        assertThat(adapter.completions).hasSize(1);
        assertThat(adapter.completions.get(0).error()).isSameAs(bad);
        assertThat(readDevice(device, 0, K1)).isEqualTo(new byte[K1]);
    }
}
