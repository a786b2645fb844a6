package dev.iomap.cli.jobfile;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A line of a job file, for error messages: {@code job.fio:12}.
 *
 * @param file the file as the user named it (or as an include resolved it)
 * @param line the line number, from 1
 */
public record Location(Path file, int line) {

    /** Validates. */
    public Location {
        Objects.requireNonNull(file, "file");
        if (line < 1) {
            throw new IllegalArgumentException("line numbers start at 1, got " + line);
        }
    }

    @Override
    public String toString() {
        return file + ":" + line;
    }
}
