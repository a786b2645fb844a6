package dev.iomap.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code iomap bench --compare}: what each column of the comparison runs with. Three forms:
 * <ul>
 *   <li>{@code KEY=V1,V2,...}: a page-cache option ({@code --set} key) with each value;
 *   <li>{@code fs.KEY=V1,V2,...}: an adapter option ({@code -O KEY=V}) with each value;
 *   <li>{@code adapter=A1[:K=V[:K=V]...],A2,...}: each adapter, formatted and mounted with the
 *       options after its name (separated by {@code :}, since {@code ,} separates the variants), e.g.
 *       {@code adapter=gfs2-like,gfs2-like:data=journal,xfs-like}.
 * </ul>
 * A variant's adapter options are added to the {@code -O} ones (replacing the same key).
 *
 * @param key what is compared: the page-cache key, {@code fs.KEY} or {@code adapter}
 * @param variants the columns, in order (two or more)
 */
record CompareVariants(String key, List<Variant> variants) {

    /** The prefix of an adapter option's key. */
    static final String FS_PREFIX = "fs.";

    /** The key comparing adapters. */
    static final String ADAPTER_KEY = "adapter";

    /**
     * One column.
     *
     * @param label its value as written after the {@code =}, naming the column
     * @param adapter the adapter it runs on; empty: the command's
     * @param fsOptions adapter options it adds to {@code -O}'s
     * @param cacheSetting the page-cache setting it makes, if any
     */
    record Variant(String label, Optional<String> adapter, Map<String, String> fsOptions,
            Optional<CacheSettings.Assignment> cacheSetting) {
        /** Copies. */
        Variant {
            fsOptions = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(fsOptions));
        }
    }

    /** Copies. */
    CompareVariants {
        variants = List.copyOf(variants);
    }

    /**
     * @param text the {@code --compare} value
     * @return its variants
     * @throws UsageException if it is not one of the three forms, has fewer than two values, or an
     *     empty one
     */
    static CompareVariants parse(String text) throws UsageException {
        int equals = text.indexOf('=');
        if (equals <= 0) {
            throw bad(text, "write KEY=V1,V2");
        }
        String key = text.substring(0, equals).strip();
        List<String> values = List.of(text.substring(equals + 1).split(",", -1)).stream().map(String::strip).toList();
        if (values.size() < 2 || values.stream().anyMatch(String::isEmpty)) {
            throw bad(text, "give a key and two or more values");
        }
        List<Variant> variants = new ArrayList<>();
        for (String value : values) {
            variants.add(variant(text, key, value));
        }
        return new CompareVariants(key, variants);
    }

    private static Variant variant(String text, String key, String value) throws UsageException {
        if (key.equals(ADAPTER_KEY)) {
            String[] parts = value.split(":", -1);
            Map<String, String> options = new LinkedHashMap<>();
            for (int i = 1; i < parts.length; i++) {
                options.putAll(FsOptions.parse(List.of(parts[i])));
            }
            if (parts[0].isBlank()) {
                throw bad(text, "'" + value + "' names no adapter");
            }
            return new Variant(value, Optional.of(parts[0].strip()), options, Optional.empty());
        }
        if (key.startsWith(FS_PREFIX)) {
            String option = key.substring(FS_PREFIX.length());
            if (option.isEmpty()) {
                throw bad(text, "name the adapter option after 'fs.'");
            }
            return new Variant(value, Optional.empty(), Map.of(option, value), Optional.empty());
        }
        return new Variant(value, Optional.empty(), Map.of(), Optional.of(new CacheSettings.Assignment(key, value)));
    }

    private static UsageException bad(String text, String why) {
        return new UsageException("bad --compare '" + text + "': " + why + ", e.g. --compare perBlockDirty=false,true,"
                + " --compare fs.data=ordered,journal or --compare adapter=xfs-like,snapfs");
    }

    /** @return whether the columns run on different adapters */
    boolean comparesAdapters() {
        return key.equals(ADAPTER_KEY);
    }

    /** @return the columns' labels, in order */
    List<String> labels() {
        return variants.stream().map(Variant::label).toList();
    }
}
