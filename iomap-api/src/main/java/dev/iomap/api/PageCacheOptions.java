package dev.iomap.api;

import java.time.Duration;
import java.util.Objects;

/**
 * Knobs of the page cache, including the ones that reproduce the seeds' experiments.
 *
 * <p>Immutable; build with {@link #builder()}. The constructor checks every value and throws
 * {@link IllegalArgumentException} naming the bad one.
 *
 * @param pageSize bytes per page: a power of two from 4 KiB to 64 KiB (64 KiB models Power and arm64)
 * @param maxFolioOrder largest folio order (a folio is {@code pageSize << order} bytes); 0 disables
 *     large folios (the kernel's {@code mapping_set_large_folios}); at most {@link #MAX_ORDER}
 * @param orderHints whether the write path asks for a folio as large as the write
 *     ({@code FolioOrder.hint(len)}); off means single-page folios for writes
 * @param perBlockDirty whether writeback writes only the dirty blocks of a folio; off is the
 *     pre-patch behaviour that writes every uptodate block of a dirty folio
 * @param stateLock how many state-lock cycles a write takes per folio
 * @param cacheBudgetBytes memory the cache may hold before reclaim drops clean folios
 * @param dirtyBackgroundBytes dirty bytes above which background writeback starts (the kernel's
 *     {@code vm.dirty_background_bytes})
 * @param dirtyLimitBytes dirty bytes above which writers are throttled; at least the background value
 *     ({@code vm.dirty_bytes})
 * @param dirtyExpire age after which dirty data is written back anyway ({@code vm.dirty_expire_centisecs})
 * @param writebackInterval how often the flusher wakes to look for expired data
 *     ({@code vm.dirty_writeback_centisecs})
 * @param maxIoendBytes largest ioend writeback builds by merging adjacent dirty runs (the kernel caps
 *     an ioend at {@code IOEND_BATCH_SIZE}, 4096 folios: 16 MiB of 4 KiB pages); default 16 MiB
 * @param maxReadaheadBytes largest readahead window of an open file read sequentially (the kernel's
 *     {@code read_ahead_kb}, {@code file_ra_state.ra_pages}); the window starts small and grows to
 *     this; 0 turns readahead off (every read miss reads only what the read needs); default 8 MiB
 * @param poisonNewFolios fill new folio memory with {@link #POISON_BYTE} instead of zeroes, so stale
 *     data exposure shows up in tests (the kernel's page poisoning)
 */
public record PageCacheOptions(
        int pageSize,
        int maxFolioOrder,
        boolean orderHints,
        boolean perBlockDirty,
        StateLock stateLock,
        long cacheBudgetBytes,
        long dirtyBackgroundBytes,
        long dirtyLimitBytes,
        Duration dirtyExpire,
        Duration writebackInterval,
        long maxIoendBytes,
        long maxReadaheadBytes,
        boolean poisonNewFolios) {

    /** The largest folio order allowed (2^12 pages). */
    public static final int MAX_ORDER = 12;

    /** The byte new folios are filled with when {@link #poisonNewFolios} is on. */
    public static final byte POISON_BYTE = (byte) 0x6b;

    /** Validates. */
    public PageCacheOptions {
        Objects.requireNonNull(stateLock, "stateLock");
        Objects.requireNonNull(dirtyExpire, "dirtyExpire");
        Objects.requireNonNull(writebackInterval, "writebackInterval");
        if (Integer.bitCount(pageSize) != 1 || pageSize < 4096 || pageSize > 65536) {
            throw new IllegalArgumentException("pageSize must be a power of two from 4096 to 65536, got " + pageSize);
        }
        if (maxFolioOrder < 0 || maxFolioOrder > MAX_ORDER) {
            throw new IllegalArgumentException("maxFolioOrder must be 0.." + MAX_ORDER + ", got " + maxFolioOrder);
        }
        if (cacheBudgetBytes < (long) pageSize << maxFolioOrder) {
            throw new IllegalArgumentException("cacheBudgetBytes must hold at least one largest folio, got "
                    + cacheBudgetBytes);
        }
        if (dirtyBackgroundBytes <= 0 || dirtyLimitBytes < dirtyBackgroundBytes) {
            throw new IllegalArgumentException("need 0 < dirtyBackgroundBytes <= dirtyLimitBytes, got "
                    + dirtyBackgroundBytes + " and " + dirtyLimitBytes);
        }
        if (dirtyExpire.isNegative() || dirtyExpire.isZero()) {
            throw new IllegalArgumentException("dirtyExpire must be positive, got " + dirtyExpire);
        }
        if (writebackInterval.isNegative() || writebackInterval.isZero()) {
            throw new IllegalArgumentException("writebackInterval must be positive, got " + writebackInterval);
        }
        if (maxIoendBytes < pageSize) {
            throw new IllegalArgumentException("maxIoendBytes must be at least one page, got " + maxIoendBytes);
        }
        if (maxReadaheadBytes < 0 || maxReadaheadBytes > 1L << 30) {
            throw new IllegalArgumentException("maxReadaheadBytes must be 0 (off) to 1 GiB, got " + maxReadaheadBytes);
        }
    }

    /** @return the defaults: 4 KiB pages, 2 MiB folios, hints on, per-block dirty on, combined lock */
    public static PageCacheOptions defaults() {
        return builder().build();
    }

    /** @return a builder holding the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding these values */
    public Builder toBuilder() {
        return new Builder()
                .pageSize(pageSize)
                .maxFolioOrder(maxFolioOrder)
                .orderHints(orderHints)
                .perBlockDirty(perBlockDirty)
                .stateLock(stateLock)
                .cacheBudgetBytes(cacheBudgetBytes)
                .dirtyBackgroundBytes(dirtyBackgroundBytes)
                .dirtyLimitBytes(dirtyLimitBytes)
                .dirtyExpire(dirtyExpire)
                .writebackInterval(writebackInterval)
                .maxIoendBytes(maxIoendBytes)
                .maxReadaheadBytes(maxReadaheadBytes)
                .poisonNewFolios(poisonNewFolios);
    }

    /** @return the size in bytes of the largest folio (the kernel's {@code mapping_max_folio_size}) */
    public long maxFolioSize() {
        return (long) pageSize << maxFolioOrder;
    }

    /** @return log2 of {@link #pageSize} */
    public int pageShift() {
        return Integer.numberOfTrailingZeros(pageSize);
    }

    /** Builds {@link PageCacheOptions}; not thread-safe. */
    public static final class Builder {
        private static final long MIB = 1L << 20;
        private int pageSize = 4096;
        private Integer maxFolioOrder;
        private boolean orderHints = true;
        private boolean perBlockDirty = true;
        private StateLock stateLock = StateLock.COMBINED;
        private long cacheBudgetBytes = 256 * MIB;
        private long dirtyBackgroundBytes = 32 * MIB;
        private long dirtyLimitBytes = 64 * MIB;
        private Duration dirtyExpire = Duration.ofSeconds(30);
        private Duration writebackInterval = Duration.ofSeconds(5);
        private long maxIoendBytes = 16 * MIB;
        private long maxReadaheadBytes = 8 * MIB;
        private boolean poisonNewFolios;

        private Builder() {
        }

        /**
         * @param value bytes per page
         * @return this builder
         */
        public Builder pageSize(int value) {
            pageSize = value;
            return this;
        }

        /**
         * @param value largest folio order; unset means folios up to 2 MiB
         * @return this builder
         */
        public Builder maxFolioOrder(int value) {
            maxFolioOrder = value;
            return this;
        }

        /**
         * @param value whether writes ask for large folios
         * @return this builder
         */
        public Builder orderHints(boolean value) {
            orderHints = value;
            return this;
        }

        /**
         * @param value whether writeback writes only dirty blocks
         * @return this builder
         */
        public Builder perBlockDirty(boolean value) {
            perBlockDirty = value;
            return this;
        }

        /**
         * @param value lock cycles per write
         * @return this builder
         */
        public Builder stateLock(StateLock value) {
            stateLock = value;
            return this;
        }

        /**
         * @param value cache memory budget in bytes
         * @return this builder
         */
        public Builder cacheBudgetBytes(long value) {
            cacheBudgetBytes = value;
            return this;
        }

        /**
         * @param value dirty bytes that start background writeback
         * @return this builder
         */
        public Builder dirtyBackgroundBytes(long value) {
            dirtyBackgroundBytes = value;
            return this;
        }

        /**
         * @param value dirty bytes that throttle writers
         * @return this builder
         */
        public Builder dirtyLimitBytes(long value) {
            dirtyLimitBytes = value;
            return this;
        }

        /**
         * @param value age after which dirty data is written back
         * @return this builder
         */
        public Builder dirtyExpire(Duration value) {
            dirtyExpire = value;
            return this;
        }

        /**
         * @param value how often the flusher wakes
         * @return this builder
         */
        public Builder writebackInterval(Duration value) {
            writebackInterval = value;
            return this;
        }

        /**
         * @param value largest ioend in bytes
         * @return this builder
         */
        public Builder maxIoendBytes(long value) {
            maxIoendBytes = value;
            return this;
        }

        /**
         * @param value largest readahead window in bytes; 0 turns readahead off; unset means 2 MiB
         * @return this builder
         */
        public Builder maxReadaheadBytes(long value) {
            maxReadaheadBytes = value;
            return this;
        }

        /**
         * @param value whether new folios are filled with poison
         * @return this builder
         */
        public Builder poisonNewFolios(boolean value) {
            poisonNewFolios = value;
            return this;
        }

        /**
         * @return the options
         * @throws IllegalArgumentException if a value is out of range
         */
        public PageCacheOptions build() {
            int order = maxFolioOrder != null ? maxFolioOrder
                    : Math.max(0, 21 - Integer.numberOfTrailingZeros(Math.max(pageSize, 1)));
            return new PageCacheOptions(pageSize, order, orderHints, perBlockDirty, stateLock,
                    cacheBudgetBytes, dirtyBackgroundBytes, dirtyLimitBytes, dirtyExpire, writebackInterval,
                    maxIoendBytes, maxReadaheadBytes, poisonNewFolios);
        }
    }
}
