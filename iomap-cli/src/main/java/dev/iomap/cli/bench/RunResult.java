package dev.iomap.cli.bench;

import java.time.Instant;
import java.util.List;

/**
 * One run of a plan on a fresh device.
 *
 * @param settings where and how it ran
 * @param device the device as reports name it
 * @param groups each group's result, in order
 * @param finished when the run ended
 */
public record RunResult(BenchSettings settings, String device, List<GroupResult> groups, Instant finished) {

    /** Copies. */
    public RunResult {
        groups = List.copyOf(groups);
    }

    /** @return whether some thread stopped on an error */
    public boolean failed() {
        return groups.stream().flatMap(g -> g.threads().stream()).anyMatch(t -> t.error().isPresent());
    }
}
