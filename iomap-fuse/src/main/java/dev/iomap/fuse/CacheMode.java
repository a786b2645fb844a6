package dev.iomap.fuse;

/**
 * How the kernel's caches are used by a mount: one of three modes for file data, and how long the kernel
 * may trust the names and attributes it was told. The coherence rules of each are in
 * docs/design-notes.md, "Issue 37, item 2: the FUSE mount's cache modes".
 *
 * <ul>
 *   <li>{@link Mode#DIRECT} (the default): every open that may write, and every {@code O_DIRECT} open, is
 *       direct I/O ({@code FOPEN_DIRECT_IO}): one request per {@code write()}, iomap4j's page cache the
 *       only one that holds the data. Read-only opens use the kernel's page cache and keep it across
 *       opens ({@code FOPEN_KEEP_CACHE}) where {@code readCache} allows (Linux 6.6 and later, where a
 *       direct write drops the cached pages it covers); without it every open is direct I/O.</li>
 *   <li>{@link Mode#KERNEL}: every open uses the kernel's page cache, writes go through it at once
 *       (write-through: one request per {@code write()}).</li>
 *   <li>{@link Mode#WRITEBACK}: the kernel's writeback cache ({@code FUSE_WRITEBACK_CACHE}): writes are
 *       gathered in the kernel's page cache and sent when it writes back, in requests of up to 1 MiB.</li>
 * </ul>
 *
 * <p>A mount whose image other nodes change ({@code sharedImage}: a cluster node) is {@link Mode#DIRECT}
 * without read caching, and the kernel caches no attributes (timeout 0), so sizes and modes always come
 * from the file system under its cluster locks.
 *
 * @param mode the data mode
 * @param readCache with {@link Mode#DIRECT}: whether read-only opens use the kernel's page cache
 * @param sharedImage whether other nodes change the image (nothing stays cached in the kernel)
 * @param attributeTimeout seconds the kernel may trust attributes: 0 for a shared image, else
 *     {@link #TIMEOUT_SECONDS} unless {@code -o attr_timeout=} says otherwise
 * @param entryTimeout seconds the kernel may trust a name's inode: {@link #TIMEOUT_SECONDS} unless
 *     {@code -o entry_timeout=} says otherwise
 */
public record CacheMode(Mode mode, boolean readCache, boolean sharedImage, double attributeTimeout,
        double entryTimeout) {

    /** The data modes. */
    public enum Mode {
        /** Direct I/O for every open that may write (the default). */
        DIRECT,
        /** The kernel's page cache, write-through. */
        KERNEL,
        /** The kernel's writeback cache. */
        WRITEBACK
    }

    /** How long the kernel may trust a name or an attribute, where nothing else changes the image: 1 s. */
    static final double TIMEOUT_SECONDS = 1.0;

    /**
     * @param options how to mount
     * @param kernelDropsCacheOnDirectWrite whether the running kernel (6.6 and later) drops the cached pages
     *     a direct write covers, which read caching of a direct-I/O mount needs
     * @return the mode those options ask for
     */
    public static CacheMode of(FuseMountOptions options, boolean kernelDropsCacheOnDirectWrite) {
        HighLevelOptions asked = HighLevelOptions.of(options.fuseOptions());
        double entry = asked.entryTimeout() != null ? asked.entryTimeout() : TIMEOUT_SECONDS;
        if (options.sharedImage()) {
            return new CacheMode(Mode.DIRECT, false, true, 0, entry);
        }
        double attributes = asked.attributeTimeout() != null ? asked.attributeTimeout() : TIMEOUT_SECONDS;
        if (!options.directIo()) {
            boolean writeback = options.writebackCache() || asked.writebackCache();
            return new CacheMode(writeback ? Mode.WRITEBACK : Mode.KERNEL, true, false, attributes, entry);
        }
        boolean readCache = options.readCache() && kernelDropsCacheOnDirectWrite && !asked.directIo();
        return new CacheMode(Mode.DIRECT, readCache, false, attributes, entry);
    }

    /**
     * @param flags an open's flags as the kernel passes them
     * @param oDirect {@code O_DIRECT} of this architecture
     * @return whether the open bypasses the kernel's page cache ({@code FOPEN_DIRECT_IO}): in
     *     {@link Mode#DIRECT}, every open that may write or asks for {@code O_DIRECT}, and every open
     *     without {@code readCache}; never in the other modes (the kernel handles an {@code O_DIRECT} open
     *     there itself)
     */
    boolean bypasses(int flags, int oDirect) {
        if (mode != Mode.DIRECT) {
            return false;
        }
        boolean readOnly = (flags & FuseBridge.O_ACCMODE) == FuseBridge.O_RDONLY;
        return !readCache || !readOnly || (flags & oDirect) != 0;
    }

    /**
     * @return whether a cached open keeps what the kernel cached of the file before
     *     ({@code FOPEN_KEEP_CACHE}): yes, every change of a file reaches the file system through its one
     *     kernel inode, which drops or updates its pages for each; never for a shared image
     */
    boolean keepsKernelCache() {
        return !sharedImage;
    }

    /** @return whether any open may use the kernel's page cache (so its automatic invalidation is turned off) */
    boolean anyCached() {
        return mode != Mode.DIRECT || readCache;
    }

    /** @return whether the kernel is asked for its writeback cache */
    boolean writebackCache() {
        return mode == Mode.WRITEBACK;
    }

    /** @return whether every open that may write is direct I/O ({@link Mode#DIRECT}) */
    public boolean directIo() {
        return mode == Mode.DIRECT;
    }
}
