package dev.iomap.cli;

import dev.iomap.api.MountOptions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * {@code -O KEY[=VALUE]} ({@code --fs-option}): the adapter's own mount options
 * ({@link MountOptions#adapterOptions()}), as {@code mount -o} gives a kernel filesystem its options.
 * Each {@code -O} holds one option or a comma list ({@code -O data=journal,journal=1}); a key without
 * {@code =} is a flag (value {@code ""}). The CLI does not know which keys an adapter takes: the
 * adapter refuses unknown ones when it mounts, and that message is what the user sees.
 */
public final class FsOptions {

    private FsOptions() {
    }

    /**
     * @param items the {@code -O} values, in order
     * @return the options, in the order given
     * @throws UsageException for an option without a name, or a key given twice
     */
    public static Map<String, String> parse(List<String> items) throws UsageException {
        Map<String, String> options = new LinkedHashMap<>();
        for (String item : items) {
            Map<String, String> parsed;
            try {
                parsed = MountOptions.parseAdapterOptions(item);
            } catch (IllegalArgumentException e) {
                throw new UsageException("bad -O '" + item + "': " + e.getMessage());
            }
            if (parsed.isEmpty()) {
                throw new UsageException("bad -O '': give KEY or KEY=VALUE");
            }
            for (var option : parsed.entrySet()) {
                if (options.put(option.getKey(), option.getValue()) != null) {
                    throw new UsageException("-O " + option.getKey() + " given twice");
                }
            }
        }
        return options;
    }

    /**
     * @param options adapter options
     * @return them as {@code -O} would take them: {@code key=value,flag}; "" for none
     */
    public static String format(Map<String, String> options) {
        return options.entrySet().stream()
                .map(option -> option.getValue().isEmpty() ? option.getKey() : option.getKey() + "=" + option.getValue())
                .collect(Collectors.joining(","));
    }
}
