package dev.iomap.cli.bench;

import dev.iomap.cli.jobfile.JobSpec;
import java.time.Instant;
import java.util.Optional;

/**
 * What one thread of a job did in its measured phase.
 *
 * @param job the job
 * @param thread the thread's number within the job, from 0
 * @param read reads
 * @param write writes
 * @param sync fsync and fdatasync latencies
 * @param runtimeNanos the measured phase's length
 * @param userCpuNanos CPU time in user mode during it
 * @param systemCpuNanos CPU time in the kernel during it
 * @param finished when the thread stopped
 * @param error why it stopped early, if it did
 */
public record ThreadResult(
        JobSpec job,
        int thread,
        DirectionStats read,
        DirectionStats write,
        LatencyStats sync,
        long runtimeNanos,
        long userCpuNanos,
        long systemCpuNanos,
        Instant finished,
        Optional<String> error) {
}
