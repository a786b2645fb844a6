package dev.iomap.it;

import static org.assertj.core.api.Assertions.fail;

import dev.iomap.adapter.xfs.XfsLikeAdapter;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.TestData;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a data-loss race the kit found in adapter-xfs-like (now fixed there):
 * {@code MetadataLog.commit}, reached from {@code XfsWritebackOps.mapBlocks} through
 * {@code commitIfLarge}, walked the extent maps of every logged inode without those inodes' locks
 * while another thread's {@code begin} changed one of them. The
 * {@code ConcurrentModificationException} failed the writeback of a folio of an unrelated file, whose
 * dirty data the core then dropped (reported only at that file's next fsync).
 *
 * <p>Found by {@code ConcurrencyContract.writersAndReadersUnderMemoryPressure} (about one run in ten
 * on large-folio geometries) and by the long model-checker pass under memory pressure
 * ({@code -Dfsx.ops=100000 -Dfsx.seed=20261130}); those op logs need the flusher's timing and do not
 * replay, so this test drives the race directly: four writers under memory pressure, 60 rounds.
 */
class XfsLikeConcurrentCommitRegressionTest {
    private static final int THREADS = 4;

    @Test
    void aJournalCommitDuringWritebackRacesOtherInodesExtentMaps() throws Exception {
        Geometry geometry = new Geometry(4096, 65536, 5);
        AdapterFixture kit = AdapterFixture.of(new XfsLikeAdapter(), geometry).withDeviceBlockSizeOfFilesystem();
        PageCacheOptions pressure = geometry.pageCacheOptions().toBuilder()
                .cacheBudgetBytes(8L << 20)
                .dirtyBackgroundBytes(256 << 10)
                .dirtyLimitBytes(1 << 20)
                .dirtyExpire(Duration.ofSeconds(30))
                .writebackInterval(Duration.ofSeconds(5))
                .build();
        for (int round = 0; round < 60; round++) {
            RamBlockDevice device = kit.newFormattedDevice();
            try (IomapFileSystem fs = IomapFileSystems.mount(XfsLikeAdapter.NAME, device,
                    new MountOptions(pressure, false))) {
                String failure = writeConcurrently(fs, round);
                if (failure != null) {
                    fail("round %d: writeback failed under concurrent writers; the data of that file was dropped:%n%s",
                            round, failure);
                }
            }
        }
    }

    /** @return null, or the first fsync failure with its cause chain */
    private static String writeConcurrently(IomapFileSystem fs, int round) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    try (IomapFile file = fs.create("/f" + thread)) {
                        Random random = new Random(round * 31L + thread);
                        for (int i = 0; i < 200; i++) {
                            long pos = random.nextInt(4 << 20);
                            int length = 1 + random.nextInt(3 * 4096);
                            file.write(pos, TestData.buffer(thread * 1000L + i, pos, length));
                        }
                        file.fsync();
                        return null;
                    } catch (IOException e) {
                        StringWriter trace = new StringWriter();
                        e.printStackTrace(new PrintWriter(trace));
                        return trace.toString();
                    }
                }));
            }
            for (Future<String> result : results) {
                String failure = result.get();
                if (failure != null) {
                    return failure;
                }
            }
            return null;
        } finally {
            pool.shutdownNow();
        }
    }
}
