package dev.iomap.core;

import static dev.iomap.core.TestIo.readDevice;
import static dev.iomap.testkit.TestData.buffer;
import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.WritebackException;
import dev.iomap.core.mm.Folio;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link WritebackOps#writebackSubmit} is shown each ioend's exact range and bytes, also of blocks a
 * mapped store dirtied, before the device write; when it fails, nothing of that ioend is written and
 * it completes as failed, reported at the next fsync. 4 KiB single-page folios, 1 KiB blocks, device
 * offset = file offset + {@code BASE}; the event log interleaves the hooks and the device writes.
 */
class WritebackSubmitTest {
    private static final int K1 = 1024;
    private static final long BASE = 1L << 20;
    private static final long MAX = 1L << 30;

    private final RamBlockDevice ram = new RamBlockDevice(K1, 16L << 20);
    private final List<String> events = new ArrayList<>();
    private final IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(0).build(),
            new JdataTestOps.Device(ram, events));
    private final JdataTestOps ops = new JdataTestOps(K1, BASE, events);
    private final CachedInode inode = cache.addInode(1, K1, 0, MAX, ops, ops);
    private final OpenFile file = inode.open();

    @AfterEach
    void closeCache() {
        cache.close();
    }

    /** @return the events of the hooks and the device writes, without completions (their thread varies) */
    private List<String> submitsAndWrites() {
        synchronized (events) {
            return events.stream().filter(e -> e.startsWith("submit") || e.startsWith("write")).toList();
        }
    }

    private static void assertSubmit(JdataTestOps.Submit submit, long offset, int buffers, byte[] data) {
        assertThat(submit.ioend().offset()).as("offset").isEqualTo(offset);
        assertThat(submit.ioend().length()).as("length").isEqualTo(data.length);
        assertThat(submit.ioend().address()).as("address").isEqualTo(BASE + offset);
        assertThat(submit.ioend().type()).isEqualTo(IomapType.MAPPED);
        assertThat(submit.buffers()).as("buffers").isEqualTo(buffers);
        assertThat(submit.data()).as("data").isEqualTo(data);
        assertThat(submit.readOnly()).as("read-only").isTrue();
    }

    @Test
    void eachIoendIsShownExactlyItsBytesJustBeforeItsDeviceWrite() throws Exception {
        // The later range first: a write past EOF would write back dirty data before it.
        file.write(5 * K1, buffer(1, 5 * K1, K1));
        file.write(0, buffer(2, 0, 2 * K1));
        ops.clear();

        file.fsync();

        assertThat(ops.submits()).hasSize(2);
        assertSubmit(ops.submits().get(0), 0, 1, pattern(2, 0, 2 * K1));
        assertSubmit(ops.submits().get(1), 5 * K1, 1, pattern(1, 5 * K1, K1));
        assertThat(submitsAndWrites()).containsExactly(
                "submit 0 2048 at " + BASE, "write " + BASE + " 2048",
                "submit 5120 1024 at " + (BASE + 5 * K1), "write " + (BASE + 5 * K1) + " 1024");
        assertThat(readDevice(ram, BASE + 5 * K1, K1)).isEqualTo(pattern(1, 5 * K1, K1));
    }

    @Test
    void anIoendAcrossTwoFoliosIsShownOneViewPerFolioInFileOrder() throws Exception {
        file.write(3 * K1, buffer(3, 3 * K1, 2 * K1));
        ops.clear();

        file.fsync();

        assertThat(ops.submits()).hasSize(1);
        assertSubmit(ops.submits().get(0), 3 * K1, 2, pattern(3, 3 * K1, 2 * K1));
        assertThat(submitsAndWrites()).containsExactly(
                "submit 3072 2048 at " + (BASE + 3 * K1), "write " + (BASE + 3 * K1) + " 2048");
    }

    @Test
    void blocksDirtiedByAMappedStoreAreShownToo() throws Exception {
        byte[] base = pattern(4, 0, 4 * K1);
        file.write(0, ByteBuffer.wrap(base));
        file.fsync();
        ops.clear();
        byte[] stored = pattern(5, 1500, 100);

        inode.map().store(1500, ByteBuffer.wrap(stored));
        file.fsync();

        byte[] model = base.clone();
        System.arraycopy(stored, 0, model, 1500, 100);
        assertThat(ops.puts()).isEmpty();
        assertThat(ops.submits()).hasSize(1);
        // The write fault dirties every block of the folio inside EOF.
        assertSubmit(ops.submits().get(0), 0, 1, model);
        assertThat(readDevice(ram, BASE, 4 * K1)).isEqualTo(model);
    }

    @Test
    void aFailingBeforeSubmitWritesNothingOfItsIoendAndFailsTheNextFsync() throws Exception {
        file.write(5 * K1, buffer(6, 5 * K1, K1));
        file.write(0, buffer(7, 0, K1));
        ops.clear();
        IOException full = new IOException("journal full");
        ops.failNextSubmit(full);

        assertThatThrownBy(file::fsync).isInstanceOf(WritebackException.class)
                .hasMessageContaining("journal full")
                .satisfies(e -> assertThat(e.getCause()).isSameAs(full));

        assertThat(submitsAndWrites()).containsExactly(
                "submit 0 1024 at " + BASE,
                "submit 5120 1024 at " + (BASE + 5 * K1), "write " + (BASE + 5 * K1) + " 1024");
        assertThat(readDevice(ram, BASE, K1)).isEqualTo(new byte[K1]);
        assertThat(readDevice(ram, BASE + 5 * K1, K1)).isEqualTo(pattern(6, 5 * K1, K1));
        List<IoendCompletion> done = ops.completions().stream()
                .sorted((a, b) -> Long.compare(a.offset(), b.offset())).toList();
        assertThat(done).extracting(IoendCompletion::offset).containsExactly(0L, 5L * K1);
        assertThat(done.get(0).error()).isSameAs(full);
        assertThat(done.get(1).failed()).isFalse();
        Folio folio = inode.pageCache().lookup(0);
        assertThat(folio.isWriteback()).isFalse();
        assertThat(folio.isDirty()).isFalse();
        assertThatCode(file::fsync).doesNotThrowAnyException();
        assertThat(Arrays.copyOf(TestIo.read(file, 0, K1), K1)).isEqualTo(pattern(7, 0, K1));
    }
}
