package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.DeviceStats;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.IoPurpose;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DeviceCountersTest {
    private final DeviceCounters counters = new DeviceCounters();

    @Test
    void startsAtZero() {
        assertThat(counters.snapshot()).isEqualTo(DeviceStats.ZERO);
    }

    @Test
    void countsEachKindSeparately() {
        counters.countRead(4096);
        counters.countRead(512);
        counters.countWrite(8192, IoPurpose.DATA);
        counters.countWrite(1024, IoPurpose.METADATA);
        counters.countWrite(0, IoPurpose.METADATA);
        counters.countFlush();
        counters.countDiscard(65536);

        assertThat(counters.snapshot())
                .isEqualTo(new DeviceStats(4608, 2, 8192, 1024, 3, 1, 65536));
    }

    @Test
    void aNullPurposeCountsNothing() {
        assertThatThrownBy(() -> counters.countWrite(4096, null))
                .isInstanceOf(NullPointerException.class);
        assertThat(counters.snapshot()).isEqualTo(DeviceStats.ZERO);
    }

    @Test
    void countsFromManyThreadsWithoutLosingAny() throws Exception {
        int threads = 4;
        int perThread = 10_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            var start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        counters.countRead(512);
                        counters.countWrite(4096, i % 2 == 0 ? IoPurpose.DATA : IoPurpose.METADATA);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> future : done) {
                future.get(10, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        long total = (long) threads * perThread;
        assertThat(counters.snapshot()).isEqualTo(new DeviceStats(
                512 * total, total, 4096 * total / 2, 4096 * total / 2, total, 0, 0));
    }

    @Test
    void acceptsWholeBlocksInsideTheDevice() {
        assertThatCode(() -> {
            DeviceCounters.checkRequest("read", 0, 8192, 4096, 8192);
            DeviceCounters.checkRequest("read", 4096, 4096, 4096, 8192);
            DeviceCounters.checkRequest("read", 8192, 0, 4096, 8192);
        }).doesNotThrowAnyException();
    }

    @Test
    void namesTheValueThatIsWrong() {
        assertThatThrownBy(() -> DeviceCounters.checkRequest("read", -512, 512, 512, 4096))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("read: negative offset -512");
        assertThatThrownBy(() -> DeviceCounters.checkRequest("read", 0, -512, 512, 4096))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("read: negative length -512");
        assertThatThrownBy(() -> DeviceCounters.checkRequest("write", 100, 512, 512, 4096))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("write: offset 100 is not a multiple of the block size 512");
        assertThatThrownBy(() -> DeviceCounters.checkRequest("write", 512, 100, 512, 4096))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("write: length 100 is not a multiple of the block size 512");
        assertThatThrownBy(() -> DeviceCounters.checkRequest("discard", 3584, 1024, 512, 4096))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("discard: range [3584, +1024) ends past the device capacity 4096");
        assertThatThrownBy(() -> DeviceCounters.checkRequest("read", 4608, 0, 512, 4096))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("read: range [4608, +0) ends past the device capacity 4096");
    }

    @Test
    void rejectsARangeWhoseEndOverflows() {
        long lastAligned = Long.MAX_VALUE / 512 * 512;
        assertThatThrownBy(() -> DeviceCounters.checkRequest("read", lastAligned, 1024, 512,
                Long.MAX_VALUE / 512 * 512))
                .isInstanceOf(DeviceRangeException.class)
                .hasMessage("read: range [" + lastAligned + ", +1024) ends past the device capacity "
                        + lastAligned);
    }
}
