package dev.iomap.cli;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.StateLock;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code --set KEY=VALUE}: any {@link PageCacheOptions} component by its record name, with fio's
 * sizes ({@code 64k}, {@code 2m}) and times ({@code 500ms}, {@code 30s}) and switches
 * ({@code true}/{@code false}, {@code 1}/{@code 0}, {@code on}/{@code off}).
 */
public final class CacheSettings {

    private CacheSettings() {
    }

    /** @return the keys {@code --set} accepts: the record components of {@link PageCacheOptions} */
    public static List<String> keys() {
        return Arrays.stream(PageCacheOptions.class.getRecordComponents()).map(c -> c.getName()).toList();
    }

    /**
     * One {@code KEY=VALUE}.
     *
     * @param key a record component name of {@link PageCacheOptions}
     * @param value its value as written
     */
    public record Assignment(String key, String value) {

        /**
         * @param text {@code KEY=VALUE}
         * @return the assignment
         * @throws UsageException if there is no '='
         */
        public static Assignment parse(String text) throws UsageException {
            int equals = text.indexOf('=');
            if (equals <= 0) {
                throw new UsageException("bad --set '" + text + "': write KEY=VALUE, KEY one of " + keys());
            }
            return new Assignment(text.substring(0, equals).strip(), text.substring(equals + 1).strip());
        }
    }

    /**
     * @param pageSize the {@code --page-size} value
     * @param assignments {@code --set} assignments, applied in order after the page size
     * @return the options
     * @throws UsageException if a key is unknown, a value bad, or the combination invalid
     */
    public static PageCacheOptions options(String pageSize, List<Assignment> assignments) throws UsageException {
        PageCacheOptions.Builder builder = PageCacheOptions.builder();
        apply(builder, "pageSize", pageSize);
        for (Assignment assignment : assignments) {
            apply(builder, assignment.key(), assignment.value());
        }
        return build(builder);
    }

    /**
     * @param builder the options being built
     * @param key a record component name of {@link PageCacheOptions}
     * @param value its value
     * @throws UsageException if the key is unknown (the message lists the valid ones) or the value bad
     */
    public static void apply(PageCacheOptions.Builder builder, String key, String value) throws UsageException {
        try {
            switch (key) {
                case "pageSize" -> builder.pageSize(Math.toIntExact(Units.parseSize(value, 1024)));
                case "maxFolioOrder" -> builder.maxFolioOrder(Units.parseInt(value, 0, PageCacheOptions.MAX_ORDER));
                case "orderHints" -> builder.orderHints(Units.parseBoolean(value));
                case "perBlockDirty" -> builder.perBlockDirty(Units.parseBoolean(value));
                case "stateLock" -> builder.stateLock(stateLock(value));
                case "cacheBudgetBytes" -> builder.cacheBudgetBytes(Units.parseSize(value, 1024));
                case "dirtyBackgroundBytes" -> builder.dirtyBackgroundBytes(Units.parseSize(value, 1024));
                case "dirtyLimitBytes" -> builder.dirtyLimitBytes(Units.parseSize(value, 1024));
                case "dirtyExpire" -> builder.dirtyExpire(Units.parseTime(value));
                case "writebackInterval" -> builder.writebackInterval(Units.parseTime(value));
                case "maxIoendBytes" -> builder.maxIoendBytes(Units.parseSize(value, 1024));
                case "maxReadaheadBytes" -> builder.maxReadaheadBytes(Units.parseSize(value, 1024));
                case "poisonNewFolios" -> builder.poisonNewFolios(Units.parseBoolean(value));
                default -> throw new UsageException("unknown --set key '" + key + "'; valid keys: " + keys());
            }
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new UsageException("bad value '" + value + "' for --set " + key + ": " + e.getMessage());
        }
    }

    /**
     * @param builder the options so far
     * @return the built options
     * @throws UsageException if the combination is invalid (e.g. a dirty limit below the background
     *     threshold)
     */
    public static PageCacheOptions build(PageCacheOptions.Builder builder) throws UsageException {
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad page-cache options: " + e.getMessage());
        }
    }

    private static StateLock stateLock(String value) {
        try {
            return StateLock.valueOf(value.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("expected one of " + Arrays.toString(StateLock.values()), e);
        }
    }
}
