package dev.iomap.core.mm;

import dev.iomap.device.DeviceStats;
import dev.iomap.api.IoStats;
import dev.iomap.api.PageCacheOptions;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/** The counters of one {@code IomapCache}, shared by all its inodes. Thread-safe. */
public final class CacheStats {
    private final LongAdder appBytesWritten = new LongAdder();
    private final LongAdder appBytesRead = new LongAdder();
    private final LongAdder readHits = new LongAdder();
    private final LongAdder readMisses = new LongAdder();
    private final LongAdder mapBlocksCalls = new LongAdder();
    private final LongAdder ioends = new LongAdder();
    private final LongAdder folioStatesAllocated = new LongAdder();
    private final AtomicLongArray foliosByOrder = new AtomicLongArray(PageCacheOptions.MAX_ORDER + 1);
    private final AtomicLong cachedBytes = new AtomicLong();
    private final AtomicLong dirtyBytes = new AtomicLong();
    private final AtomicLong writebackBytes = new AtomicLong();
    /** Bytes whose writeback ended, ever: how a throttled writer sees that writeback moves. */
    private final AtomicLong writebackEndedBytes = new AtomicLong();
    /** Told each time a folio's writeback ends; set once by the cache (its throttled writers). */
    private volatile Runnable onWritebackEnded = () -> { };
    private final LongAdder raSyncWindows = new LongAdder();
    private final LongAdder raAsyncWindows = new LongAdder();
    private final LongAdder raRandomMisses = new LongAdder();
    private final LongAdder raBytesAdded = new LongAdder();
    private final LongAdder raBytesRead = new LongAdder();
    private final LongAdder raFoliosSkipped = new LongAdder();

    /** @param async whether a reader reaching a marked folio started the window, not a miss */
    public void readaheadWindow(boolean async) {
        (async ? raAsyncWindows : raSyncWindows).increment();
    }

    /** A read miss that did not look sequential started no window. */
    public void readaheadRandomMiss() {
        raRandomMisses.increment();
    }

    /** @param bytes of a folio readahead inserted */
    public void readaheadAdded(long bytes) {
        raBytesAdded.add(bytes);
    }

    /** @param bytes of a folio background readahead read */
    public void readaheadRead(long bytes) {
        raBytesRead.add(bytes);
    }

    /** Background readahead left a folio to be read on demand. */
    public void readaheadSkipped() {
        raFoliosSkipped.increment();
    }

    /** @return what readahead did so far */
    public ReadaheadStats readahead() {
        return new ReadaheadStats(raSyncWindows.sum(), raAsyncWindows.sum(), raRandomMisses.sum(),
                raBytesAdded.sum(), raBytesRead.sum(), raFoliosSkipped.sum());
    }

    /** @param bytes the application wrote */
    public void appWritten(long bytes) {
        appBytesWritten.add(bytes);
    }

    /** @param bytes the application read */
    public void appRead(long bytes) {
        appBytesRead.add(bytes);
    }

    /** A buffered read found a folio cached and uptodate. */
    public void readHit() {
        readHits.increment();
    }

    /** A buffered read had to read a folio from the device first. */
    public void readMiss() {
        readMisses.increment();
    }

    /**
     * @param budgetBytes the cache budget
     * @return where the cache stands now and how its reads fared
     */
    public dev.iomap.api.CacheStatus status(long budgetBytes) {
        return new dev.iomap.api.CacheStatus(budgetBytes, cachedBytes.get(), dirtyBytes.get(), writebackBytes.get(),
                readHits.sum(), readMisses.sum());
    }

    /** Writeback asked the adapter for a mapping. */
    public void mapBlocksCalled() {
        mapBlocksCalls.increment();
    }

    /** Writeback submitted an ioend. */
    public void ioendSubmitted() {
        ioends.increment();
    }

    void folioStateAllocated() {
        folioStatesAllocated.increment();
    }

    void folioCreated(int order, int size) {
        foliosByOrder.incrementAndGet(order);
        cachedBytes.addAndGet(size);
    }

    void folioRemoved(int size) {
        cachedBytes.addAndGet(-size);
    }

    void dirtyBytes(long delta) {
        dirtyBytes.addAndGet(delta);
    }

    void writebackBytes(long delta) {
        writebackBytes.addAndGet(delta);
        if (delta < 0) {
            writebackEndedBytes.addAndGet(-delta);
            onWritebackEnded.run();
        }
    }

    /** @return bytes whose writeback has ended since the cache was made (never decreases) */
    public long writebackEndedBytes() {
        return writebackEndedBytes.get();
    }

    /** @param listener called, on the completing thread, each time a folio's writeback ends */
    public void onWritebackEnded(Runnable listener) {
        onWritebackEnded = listener;
    }

    /** @return bytes of folio memory cached */
    public long cachedBytes() {
        return cachedBytes.get();
    }

    /** @return bytes in dirty folios (the kernel's {@code NR_FILE_DIRTY}) */
    public long dirtyBytes() {
        return dirtyBytes.get();
    }

    /** @return bytes in folios under writeback (the kernel's {@code NR_WRITEBACK}) */
    public long writebackBytes() {
        return writebackBytes.get();
    }

    /**
     * @param device the device's counters, included as they are
     * @return the counters so far
     */
    public IoStats snapshot(DeviceStats device) {
        long[] orders = new long[foliosByOrder.length()];
        for (int i = 0; i < orders.length; i++) {
            orders[i] = foliosByOrder.get(i);
        }
        return new IoStats(appBytesWritten.sum(), appBytesRead.sum(), device, mapBlocksCalls.sum(),
                ioends.sum(), folioStatesAllocated.sum(), orders);
    }
}
