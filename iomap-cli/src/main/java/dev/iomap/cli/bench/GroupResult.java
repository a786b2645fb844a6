package dev.iomap.cli.bench;

import dev.iomap.api.IoStats;
import java.util.List;

/**
 * One reporting group's run.
 *
 * @param groupId the group
 * @param threads every thread's result, in job then thread order
 * @param iomap what the page cache and device did during the group's measured phase (filesystem
 *     wide: jobs running together share one filesystem)
 */
public record GroupResult(int groupId, List<ThreadResult> threads, IoStats iomap) {

    /** Copies. */
    public GroupResult {
        threads = List.copyOf(threads);
    }
}
