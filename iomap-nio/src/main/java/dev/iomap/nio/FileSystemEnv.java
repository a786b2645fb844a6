package dev.iomap.nio;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The {@code env} map of {@link java.nio.file.FileSystems#newFileSystem(java.net.URI, Map)}, checked.
 *
 * <table>
 * <caption>keys</caption>
 * <tr><th>key</th><th>value</th><th>default</th></tr>
 * <tr><td>{@code create}</td><td>format a new image if the file does not exist</td><td>false</td></tr>
 * <tr><td>{@code size}</td><td>bytes of a new image ({@code k}, {@code m}, {@code g} suffixes)</td>
 *     <td>64m</td></tr>
 * <tr><td>{@code blockSize}</td><td>file system block size of a new image, and the block size the
 *     image device is opened with (some adapters, e.g. xfs-like, want them equal): give it to open
 *     an image made with another one</td><td>4096</td></tr>
 * <tr><td>{@code label}</td><td>label of a new image</td><td>none</td></tr>
 * <tr><td>{@code deviceBlockSize}</td><td>logical block size of the image device</td>
 *     <td>{@code blockSize}</td></tr>
 * <tr><td>{@code directIo}</td><td>open the image with {@code O_DIRECT}</td><td>false</td></tr>
 * <tr><td>{@code pageSize}, {@code maxFolioOrder}, {@code cacheBudget}, {@code perBlockDirty},
 *     {@code orderHints}</td><td>page-cache options</td><td>{@link PageCacheOptions#defaults()}</td></tr>
 * <tr><td>{@code backgroundWriteback}</td><td>whether the flusher runs</td><td>true</td></tr>
 * <tr><td>{@code adapterOptions}</td><td>the adapter's own mount options
 *     ({@link MountOptions#adapterOptions()}): a {@code mount -o} string ({@code "data=journal,journal=1"},
 *     a key without {@code =} is a flag) or a {@code Map} of keys to values; the adapter refuses keys it
 *     does not know, and {@code newFileSystem} throws its {@link dev.iomap.api.IomapException}</td>
 *     <td>none</td></tr>
 * </table>
 *
 * <p>Values are strings, numbers or booleans. An unknown key is an error, so a typo does not pass
 * silently.
 *
 * @param create whether to format a missing image
 * @param size bytes of a new image
 * @param format how to format a new image
 * @param deviceBlockSize the image device's block size
 * @param directIo whether the image is opened with {@code O_DIRECT}
 * @param mount how to mount
 */
record FileSystemEnv(boolean create, long size, FormatOptions format, int deviceBlockSize, boolean directIo,
        MountOptions mount) {

    private static final Set<String> KEYS = Set.of("create", "size", "blockSize", "label", "deviceBlockSize",
            "directIo", "pageSize", "maxFolioOrder", "cacheBudget", "perBlockDirty", "orderHints",
            "backgroundWriteback", "adapterOptions");

    /**
     * @param env the map given to {@code newFileSystem}
     * @return the settings
     * @throws IllegalArgumentException for an unknown key or a value of the wrong kind
     */
    static FileSystemEnv parse(Map<String, ?> env) {
        for (String key : env.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException("unknown iomap file system option '" + key + "'; known: "
                        + new java.util.TreeSet<>(KEYS));
            }
        }
        var format = new FormatOptions((int) bytes(env, "blockSize", 4096), string(env, "label", ""), Map.of());
        PageCacheOptions.Builder cache = PageCacheOptions.builder();
        if (env.containsKey("pageSize")) {
            cache.pageSize((int) bytes(env, "pageSize", 4096));
        }
        if (env.containsKey("maxFolioOrder")) {
            cache.maxFolioOrder((int) bytes(env, "maxFolioOrder", 0));
        }
        if (env.containsKey("cacheBudget")) {
            cache.cacheBudgetBytes(bytes(env, "cacheBudget", 0));
        }
        cache.perBlockDirty(bool(env, "perBlockDirty", true));
        cache.orderHints(bool(env, "orderHints", true));
        var mount = new MountOptions(cache.build(), bool(env, "backgroundWriteback", true), adapterOptions(env));
        return new FileSystemEnv(bool(env, "create", false), bytes(env, "size", 64L << 20), format,
                (int) bytes(env, "deviceBlockSize", format.blockSize()), bool(env, "directIo", false), mount);
    }

    /** {@code adapterOptions}: a {@code mount -o} string or a map; values of the map as strings. */
    private static Map<String, String> adapterOptions(Map<String, ?> env) {
        Object value = env.get("adapterOptions");
        if (value == null) {
            return Map.of();
        }
        if (value instanceof Map<?, ?> map) {
            Map<String, String> options = new LinkedHashMap<>();
            map.forEach((key, option) -> options.put(String.valueOf(key), option == null ? "" : option.toString()));
            return options;
        }
        try {
            return MountOptions.parseAdapterOptions(value.toString());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("option 'adapterOptions': " + e.getMessage(), e);
        }
    }

    private static String string(Map<String, ?> env, String key, String fallback) {
        Object value = env.get(key);
        return value == null ? fallback : value.toString();
    }

    private static boolean bool(Map<String, ?> env, String key, boolean fallback) {
        Object value = env.get(key);
        if (value == null) {
            return fallback;
        }
        if (value instanceof Boolean b) {
            return b;
        }
        return switch (value.toString().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("option '" + key + "' must be true or false, got '"
                    + value + "'");
        };
    }

    /** A number, or a string of digits with an optional k, m or g (binary) suffix. */
    private static long bytes(Map<String, ?> env, String key, long fallback) {
        Object value = env.get(key);
        if (value == null) {
            return fallback;
        }
        if (value instanceof Number n) {
            return n.longValue();
        }
        String text = value.toString().trim().toLowerCase(Locale.ROOT);
        int shift = switch (text.isEmpty() ? ' ' : text.charAt(text.length() - 1)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            default -> 0;
        };
        String digits = shift == 0 ? text : text.substring(0, text.length() - 1);
        try {
            return Math.multiplyExact(Long.parseLong(digits), 1L << shift);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("option '" + key + "' must be a number of bytes (e.g. 4096, 64m),"
                    + " got '" + value + "'");
        }
    }
}
