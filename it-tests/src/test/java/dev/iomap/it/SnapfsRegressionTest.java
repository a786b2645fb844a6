package dev.iomap.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.TestData;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Bugs the kit found in snapfs, each pinned by a deterministic test. */
class SnapfsRegressionTest {

    /**
     * Found by {@code ConcurrencyContract.writersOfTheirOwnFilesWithSyncAndCacheDrops} (2 runs in 200,
     * b4k-p4k-o9): an append got a NEW mapping for the pending EOF block; before it locked the folio,
     * a sync wrote the block back and a cache drop reclaimed the folio; the append then zeroed the
     * block's first bytes, data of the previous append. snapfs now gives its mappings a validity
     * cookie bumped by writeback completion, frees and conversions, and the core re-maps.
     */
    @Test
    void aMappingMadeStaleByWritebackAndReclaimIsNotUsed() throws IOException {
        SnapAdapter adapter = new SnapAdapter();
        AdapterFixture kit = AdapterFixture.of(adapter, new Geometry(4096, 4096, 9))
                .withMounter((fsAdapter, device, options) -> CoreRuntime.mount(fsAdapter, device, options));
        var device = kit.newFormattedDevice();
        try (IomapFileSystem fs = kit.mount(device); IomapFile file = fs.create("/a")) {
            byte[] first = TestData.pattern(1, 0, 4096 + 2834);
            file.write(0, ByteBuffer.wrap(first));
            adapter.runOnceAfterNextWriteBegin(() -> {
                try {
                    fs.sync();
                    fs.dropCleanCache();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            byte[] second = TestData.pattern(2, first.length, 1000);
            file.write(first.length, ByteBuffer.wrap(second));
            byte[] expected = Arrays.copyOf(first, first.length + second.length);
            System.arraycopy(second, 0, expected, first.length, second.length);
            ByteBuffer actual = ByteBuffer.allocate(expected.length);
            file.read(0, actual);
            assertThat(TestData.firstDifference(expected, actual.array(), 0)).isNull();
        }
    }
}
