package dev.iomap.adapter.xfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Writers on several files at once, with the flusher writing back under them (tiny thresholds, so
 * writeback and completions race with writes, reads, truncates and fallocates), and a thread reading
 * and statting; every file is checked against its model and fsck runs at the end.
 */
class ConcurrencyTest {
    private static final int WRITERS = 4;
    private static final int OPS = Integer.getInteger("iomap.test.ops", 400);
    private static final int MAX_SIZE = 400_000;
    private static final byte[] SEED = TestData.pattern(77, 0, 50 * 4096);

    @Test
    void writersReadersAndTheFlusherAgree() throws Exception {
        PageCacheOptions options = PageCacheOptions.builder().dirtyBackgroundBytes(64 * 1024)
                .dirtyLimitBytes(1 << 20).dirtyExpire(Duration.ofMillis(5)).writebackInterval(Duration.ofMillis(2))
                .build();
        try (RamBlockDevice device = new RamBlockDevice(4096, 64L << 20)) {
            IomapFileSystems.format("xfs-like", device, FormatOptions.blockSize(4096));
            byte[][] models = new byte[WRITERS][];
            try (IomapFileSystem fs = IomapFileSystems.mount("xfs-like", device, new MountOptions(options, true))) {
                try (IomapFile seed = fs.create("/seed")) {
                    XfsFixture.writeAt(seed, 0, SEED);
                    seed.fsync();
                }
                ExecutorService pool = Executors.newFixedThreadPool(WRITERS + 1);
                List<Future<byte[]>> writers = new ArrayList<>();
                for (int w = 0; w < WRITERS; w++) {
                    int id = w;
                    writers.add(pool.submit(() -> writer(fs, id)));
                }
                Future<?> reader = pool.submit(() -> {
                    for (int i = 0; i < 200; i++) {
                        fs.statfs();
                        fs.readdir("/");
                        Thread.onSpinWait();
                    }
                    return null;
                });
                for (int w = 0; w < WRITERS; w++) {
                    models[w] = writers.get(w).get();
                }
                reader.get();
                pool.shutdown();
                for (int w = 0; w < WRITERS; w++) {
                    try (IomapFile file = fs.open("/w" + w)) {
                        ModelCheckTest.assertSame(XfsFixture.readAll(file), models[w], "writer " + w);
                    }
                }
            }
            XfsFixture.assertClean(device);
            try (IomapFileSystem fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions())) {
                for (int w = 0; w < WRITERS; w++) {
                    try (IomapFile file = fs.open("/w" + w)) {
                        ModelCheckTest.assertSame(XfsFixture.readAll(file), models[w], "writer " + w + " remounted");
                    }
                }
                assertThat(XfsFixture.readFile(fs, "/seed")).isEqualTo(SEED);
            }
            XfsFixture.assertClean(device);
        }
    }

    private static byte[] writer(IomapFileSystem fs, int id) throws Exception {
        Random random = new Random(1000 + id);
        byte[] model = new byte[0];
        try (IomapFile file = fs.create("/w" + id); IomapFile seed = fs.open("/seed")) {
            for (int op = 0; op < OPS; op++) {
                int kind = random.nextInt(100);
                if (kind < 60) {
                    int pos = random.nextInt(MAX_SIZE - 1);
                    int len = 1 + random.nextInt(Math.min(MAX_SIZE - pos, 30_000));
                    byte[] data = TestData.pattern(random.nextInt(), 0, len);
                    XfsFixture.writeAt(file, pos, data);
                    model = Arrays.copyOf(model, Math.max(model.length, pos + len));
                    System.arraycopy(data, 0, model, pos, len);
                } else if (kind < 68) {
                    int size = random.nextInt(MAX_SIZE);
                    file.truncate(size);
                    model = Arrays.copyOf(model, size);
                } else if (kind < 78) {
                    int pos = random.nextInt(MAX_SIZE - 1);
                    int len = 1 + random.nextInt(Math.min(MAX_SIZE - pos, 50_000));
                    FallocateMode mode = FallocateMode.values()[random.nextInt(3)];
                    file.fallocate(mode, pos, len, true);
                    if (mode != FallocateMode.ALLOCATE) {
                        Arrays.fill(model, Math.min(pos, model.length), Math.min(pos + len, model.length), (byte) 0);
                    }
                } else if (kind < 83) {
                    int from = random.nextInt(40) * 4096;
                    int length = (1 + random.nextInt(10)) * 4096;
                    int to = random.nextInt(MAX_SIZE / 4096 - 10) * 4096;
                    file.cloneRange(seed, from, to, length);
                    model = Arrays.copyOf(model, Math.max(model.length, to + length));
                    System.arraycopy(SEED, from, model, to, length);
                } else if (kind < 86) {
                    file.unshare(0, MAX_SIZE);
                } else if (kind < 90) {
                    file.fsync();
                } else {
                    int pos = model.length == 0 ? 0 : random.nextInt(model.length);
                    int len = Math.min(model.length - pos, 1 + random.nextInt(50_000));
                    ModelCheckTest.assertSame(XfsFixture.read(file, pos, len),
                            Arrays.copyOfRange(model, pos, pos + len), "writer " + id + " read");
                }
            }
            assertThat(file.size()).isEqualTo(model.length);
        }
        return model;
    }
}
