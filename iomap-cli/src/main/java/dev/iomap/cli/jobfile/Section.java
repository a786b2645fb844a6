package dev.iomap.cli.jobfile;

import java.util.List;

/**
 * A {@code [name]} section of a job file and its settings in file order (included files' settings
 * where their {@code include} line was).
 *
 * @param name the name between the brackets
 * @param location the line of the header
 * @param settings the settings
 */
public record Section(String name, Location location, List<OptionSetting> settings) {

    /** The name of the section whose settings are defaults for the jobs below it. */
    public static final String GLOBAL = "global";

    /** Copies. */
    public Section {
        settings = List.copyOf(settings);
    }

    /** @return whether this is a {@code [global]} section */
    public boolean isGlobal() {
        return GLOBAL.equals(name);
    }
}
