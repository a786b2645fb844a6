package dev.iomap.adapter.zonefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Buffered appends from several threads land in the order they were made, while the flusher, the
 * dirty-limit throttle and fsyncs from every thread write the same file back at once, over a file
 * device whose two I/O threads complete writes in any order. Any write reaching the zone out of order
 * would be refused by the device and show up as a writeback error at fsync, and as a hole or a
 * misplaced block in the content.
 */
class ConcurrentAppendTest {
    static final int BLOCK = 4096;
    static final long ZONE = 16L << 20;
    static final int THREADS = 4;
    static final int APPENDS_EACH = 400;

    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void appendsFromFourThreadsLandInOrder() throws Exception {
        var layout = new ZoneLayout(ZONE, ZONE, 3, 1, 0);
        PageCacheOptions busy = PageCacheOptions.builder().pageSize(4096).maxFolioOrder(4)
                .dirtyBackgroundBytes(16 << 10).dirtyLimitBytes(64 << 10)
                .dirtyExpire(Duration.ofMillis(2)).writebackInterval(Duration.ofMillis(2)).build();
        Path image = dir.resolve("zoned.img");
        var expected = new ByteArrayOutputStream();
        try (ZonedDevice device = ZonedDevice.create(FileBlockDevice.open(image, BLOCK, layout.backingBytes(BLOCK),
                false), layout)) {
            ZonefsFixture.format(device, BLOCK);
            try (IomapFileSystem fs = ZonefsFixture.mount(device, busy, true);
                    IomapFile file = fs.open("/seq/0");
                    ExecutorService pool = Executors.newFixedThreadPool(THREADS)) {
                Object appendAtEnd = new Object();
                List<Future<?>> threads = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    int thread = t;
                    threads.add(pool.submit(() -> {
                        Random random = new Random(ZonefsFixture.SEED * 31 + thread);
                        for (int i = 0; i < APPENDS_EACH; i++) {
                            byte[] data = tagged(thread, i, 1 + random.nextInt(3));
                            synchronized (appendAtEnd) {
                                ZonefsFixture.write(file, file.size(), data);
                                expected.writeBytes(data);
                            }
                            if (random.nextInt(4) == 0) {
                                file.fsync();
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> thread : threads) {
                    thread.get(100, TimeUnit.SECONDS);
                }
                file.fsync();

                assertThat(file.size()).isEqualTo(expected.size());
                assertThat(device.zone(1).writtenBytes()).isEqualTo(expected.size());
                assertThat(ZonefsFixture.readAll(file)).isEqualTo(expected.toByteArray());
            }
        }
        try (ZonedDevice device = ZonedDevice.open(FileBlockDevice.open(image, BLOCK, false));
                IomapFileSystem fs = ZonefsFixture.mount(device);
                IomapFile file = fs.open("/seq/0")) {
            byte[] content = ZonefsFixture.readAll(file);
            assertThat(content).isEqualTo(expected.toByteArray());
            assertEachThreadsAppendsInOrder(content, APPENDS_EACH);
        }
    }

    /**
     * The same without the callers' lock: each thread appends through its own {@link OpenFlag#APPEND}
     * open at position 0, and the filesystem puts each append at the end under the inode lock.
     */
    @Test
    @Timeout(120)
    void appendOpensOfFourThreadsLandWholeAndInOrder() throws Exception {
        int appends = 100;
        var layout = new ZoneLayout(ZONE, ZONE, 3, 1, 0);
        try (ZonedDevice device = ZonedDevice.create(FileBlockDevice.open(dir.resolve("zoned.img"), BLOCK,
                layout.backingBytes(BLOCK), false), layout)) {
            ZonefsFixture.format(device, BLOCK);
            try (IomapFileSystem fs = ZonefsFixture.mount(device, ZonefsFixture.cacheOptions(), true);
                    ExecutorService pool = Executors.newFixedThreadPool(THREADS)) {
                List<Future<Long>> threads = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    int thread = t;
                    threads.add(pool.submit(() -> {
                        long bytes = 0;
                        Random random = new Random(ZonefsFixture.SEED * 31 + thread);
                        try (IomapFile file = fs.open("/seq/0", Set.of(OpenFlag.APPEND))) {
                            for (int i = 0; i < appends; i++) {
                                byte[] data = tagged(thread, i, 1 + random.nextInt(3));
                                ZonefsFixture.write(file, 0, data);
                                bytes += data.length;
                            }
                            file.fsync();
                        }
                        return bytes;
                    }));
                }
                long total = 0;
                for (Future<Long> thread : threads) {
                    total += thread.get(100, TimeUnit.SECONDS);
                }
                try (IomapFile file = fs.open("/seq/0")) {
                    assertThat(file.size()).isEqualTo(total);
                    assertThat(device.zone(1).writtenBytes()).isEqualTo(total);
                    assertEachThreadsAppendsInOrder(ZonefsFixture.readAll(file), appends);
                }
            }
        }
    }

    /** {@code blocks} blocks, each stamped with the thread, the append number and the block number. */
    private static byte[] tagged(int thread, int append, int blocks) {
        ByteBuffer data = ByteBuffer.allocate(blocks * BLOCK);
        for (int b = 0; b < blocks; b++) {
            for (int at = b * BLOCK; at < (b + 1) * BLOCK; at += 16) {
                data.putInt(at, thread).putInt(at + 4, append).putInt(at + 8, b).putInt(at + 12, blocks);
            }
        }
        return data.array();
    }

    private static void assertEachThreadsAppendsInOrder(byte[] content, int appendsEach) {
        ByteBuffer all = ByteBuffer.wrap(content);
        int[] next = new int[THREADS];
        int at = 0;
        while (at < content.length) {
            int thread = all.getInt(at);
            int append = all.getInt(at + 4);
            int blocks = all.getInt(at + 12);
            assertThat(append).as("append of thread %d at %d", thread, at).isEqualTo(next[thread]);
            for (int b = 0; b < blocks; b++) {
                assertThat(all.getInt(at + b * BLOCK + 8)).isEqualTo(b);
            }
            next[thread]++;
            at += blocks * BLOCK;
        }
        assertThat(next).containsOnly(appendsEach);
    }
}
