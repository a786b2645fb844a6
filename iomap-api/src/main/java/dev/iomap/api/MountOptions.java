package dev.iomap.api;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How to mount.
 *
 * @param pageCache the page-cache options of the mount
 * @param backgroundWriteback whether the flusher runs (off gives fully deterministic device traffic)
 * @param adapterOptions adapter-specific settings, as {@code mount -o key=value} gives them (e.g.
 *     {@code "data" -> "journal"}; a flag without a value maps to {@code ""}); an adapter refuses keys
 *     it does not know with {@link IomapException} naming the key, and ignores nothing
 * @param cluster the cluster to join as one node of several sharing the device (empty: a mount of its
 *     own). {@link IomapFileSystems#mount} connects through the scheme's
 *     {@link dev.iomap.spi.lock.ClusterJoinProvider}, mounts with the adapter's
 *     {@link dev.iomap.spi.FileSystemAdapter#clusterNode cluster node} (refused with
 *     {@link NotSupportedException} by an adapter without one: only gfs2-like has one), and closes the
 *     connection after the unmount. Every node must open the shared device so that it reads what the
 *     others wrote (e.g. {@code FileBlockDevice.openShared} with direct I/O). An adapter's own
 *     {@code mount} does not look at this component.
 */
public record MountOptions(PageCacheOptions pageCache, boolean backgroundWriteback,
        Map<String, String> adapterOptions, Optional<ClusterSpec> cluster) {

    /** Validates and copies the adapter options. */
    public MountOptions {
        Objects.requireNonNull(pageCache, "pageCache");
        adapterOptions = adapterOptions == null ? Map.of() : Map.copyOf(adapterOptions);
        cluster = cluster == null ? Optional.empty() : cluster;
    }

    /**
     * Options of a mount of its own (no cluster).
     *
     * @param pageCache the page-cache options of the mount
     * @param backgroundWriteback whether the flusher runs
     * @param adapterOptions adapter-specific settings (null: none)
     */
    public MountOptions(PageCacheOptions pageCache, boolean backgroundWriteback, Map<String, String> adapterOptions) {
        this(pageCache, backgroundWriteback, adapterOptions, Optional.empty());
    }

    /**
     * Options without adapter-specific settings.
     *
     * @param pageCache the page-cache options of the mount
     * @param backgroundWriteback whether the flusher runs
     */
    public MountOptions(PageCacheOptions pageCache, boolean backgroundWriteback) {
        this(pageCache, backgroundWriteback, Map.of());
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

    /**
     * @param options the adapter-specific settings
     * @return these options with {@code options} as the adapter's settings (replacing any)
     */
    public MountOptions withAdapterOptions(Map<String, String> options) {
        return new MountOptions(pageCache, backgroundWriteback, options, cluster);
    }

    /**
     * @param spec the cluster to join, e.g. {@code ClusterSpec.parse("zk=127.0.0.1:2181")}
     * @return these options, mounting as a node of that cluster
     */
    public MountOptions withCluster(ClusterSpec spec) {
        return new MountOptions(pageCache, backgroundWriteback, adapterOptions, Optional.of(spec));
    }

    /**
     * @param key an adapter option's name
     * @return its value, if given
     */
    public Optional<String> adapterOption(String key) {
        return Optional.ofNullable(adapterOptions.get(key));
    }

    /**
     * Refuses adapter options outside {@code known}: what every adapter's mount calls first.
     *
     * @param adapterName the adapter, for the message
     * @param known the keys the adapter understands
     * @throws IomapException naming the first unknown key (in sorted order) and the known ones
     */
    public void checkAdapterOptions(String adapterName, java.util.Set<String> known) throws IomapException {
        for (String key : new java.util.TreeSet<>(adapterOptions.keySet())) {
            if (!known.contains(key)) {
                throw new IomapException(adapterName + ": unknown mount option '" + key + "'"
                        + (known.isEmpty() ? " (it takes none)" : " (known: " + new java.util.TreeSet<>(known) + ")"));
            }
        }
    }

    /**
     * Parses {@code mount -o} text: comma-separated {@code key=value} or {@code key} (value {@code ""}).
     *
     * @param text the option string, possibly empty
     * @return the map, in no particular order
     * @throws IllegalArgumentException for an empty key or a key given twice
     */
    public static Map<String, String> parseAdapterOptions(String text) {
        Map<String, String> options = new java.util.LinkedHashMap<>();
        if (text == null || text.isEmpty()) {
            return options;
        }
        for (String item : text.split(",", -1)) {
            int eq = item.indexOf('=');
            String key = eq < 0 ? item : item.substring(0, eq);
            String value = eq < 0 ? "" : item.substring(eq + 1);
            if (key.isEmpty()) {
                throw new IllegalArgumentException("mount option without a name in '" + text + "'");
            }
            if (options.put(key, value) != null) {
                throw new IllegalArgumentException("mount option '" + key + "' given twice in '" + text + "'");
            }
        }
        return options;
    }
}
