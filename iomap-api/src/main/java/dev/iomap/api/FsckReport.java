package dev.iomap.api;

import java.util.List;

/**
 * What an adapter's consistency check found.
 *
 * @param problems each problem with its location (structure and device offset), empty if clean
 * @param checked a one-line summary of what was checked (inodes, extents, blocks)
 */
public record FsckReport(List<String> problems, String checked) {

    /** Copies. */
    public FsckReport {
        problems = List.copyOf(problems);
    }

    /** @return whether no problem was found */
    public boolean isClean() {
        return problems.isEmpty();
    }
}
