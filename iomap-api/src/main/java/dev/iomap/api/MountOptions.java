package dev.iomap.api;

import java.util.Objects;

/**
 * How to mount.
 *
 * @param pageCache the page-cache options of the mount
 * @param backgroundWriteback whether the flusher runs (off gives fully deterministic device traffic)
 */
public record MountOptions(PageCacheOptions pageCache, boolean backgroundWriteback) {

    /** Validates. */
    public MountOptions {
        Objects.requireNonNull(pageCache, "pageCache");
    }

    /** @return default page-cache options with the flusher on */
    public static MountOptions defaults() {
        return new MountOptions(PageCacheOptions.defaults(), true);
    }

    /**
     * @param pageCache the page-cache options
     * @return those options with the flusher on
     */
    public static MountOptions of(PageCacheOptions pageCache) {
        return new MountOptions(pageCache, true);
    }
}
