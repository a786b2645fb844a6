package dev.iomap.cli.jobfile;

import java.util.Objects;

/**
 * One {@code key=value} line of a job file, with the option already known.
 *
 * @param option the option
 * @param key the key as written (an alias stays an alias, for the JSON output's option lists)
 * @param value the value after comment stripping and {@code ${VAR}} expansion; "1" for a flag
 *     given without a value (fio's {@code time_based}, {@code group_reporting})
 * @param location where it was written
 */
public record OptionSetting(FioOption option, String key, String value, Location location) {

    /** Validates. */
    public OptionSetting {
        Objects.requireNonNull(option, "option");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(location, "location");
    }
}
