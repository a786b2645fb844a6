package dev.iomap.cli.jobfile;

import java.nio.file.Path;
import java.util.List;

/**
 * A parsed fio job file: its sections in order, {@code [global]} ones included.
 *
 * @param path the file as the user named it
 * @param sections the sections
 */
public record JobFile(Path path, List<Section> sections) {

    /** Copies. */
    public JobFile {
        sections = List.copyOf(sections);
    }
}
