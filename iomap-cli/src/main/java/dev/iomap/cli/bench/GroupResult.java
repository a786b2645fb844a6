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
 * @param timeline the group's bytes read and written so far, sampled through the run (ramp time
 *     included), for the report's bandwidth chart
 */
public record GroupResult(int groupId, List<ThreadResult> threads, IoStats iomap, List<BandwidthSample> timeline) {

    /** Copies. */
    public GroupResult {
        threads = List.copyOf(threads);
        timeline = List.copyOf(timeline);
    }
}
