package dev.iomap.cli.report;

import dev.iomap.api.IoStats;
import dev.iomap.cli.bench.DirectionStats;
import dev.iomap.cli.bench.GroupResult;
import dev.iomap.cli.bench.LatencyStats;
import dev.iomap.cli.bench.ThreadResult;
import dev.iomap.cli.jobfile.JobSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One block of fio's report: a thread, or (with {@code group_reporting}) all the group's threads
 * merged. Merged runtime is the longest thread's, so bandwidth is the aggregate, as in fio.
 *
 * @param name the first job's name
 * @param groupId the group
 * @param jobs threads merged
 * @param job the first job
 * @param read reads
 * @param write writes
 * @param sync sync latencies
 * @param runtimeNanos the longest measured phase
 * @param totalRuntimeNanos the measured phases added up (for CPU shares)
 * @param userCpuNanos user CPU added up
 * @param systemCpuNanos system CPU added up
 * @param finished when the last thread stopped
 * @param error the first error, if any
 * @param iomap the group's page-cache and device counters
 */
public record ReportEntry(
        String name,
        int groupId,
        int jobs,
        JobSpec job,
        DirectionStats read,
        DirectionStats write,
        LatencyStats sync,
        long runtimeNanos,
        long totalRuntimeNanos,
        long userCpuNanos,
        long systemCpuNanos,
        Instant finished,
        Optional<String> error,
        IoStats iomap) {

    /**
     * @param group a group's result
     * @return its report blocks: one per thread, except that consecutive threads of jobs with
     *     {@code group_reporting} are merged
     */
    public static List<ReportEntry> of(GroupResult group) {
        List<ReportEntry> entries = new ArrayList<>();
        Builder current = null;
        for (ThreadResult thread : group.threads()) {
            boolean merge = current != null && current.job.groupReporting() && thread.job().groupReporting();
            if (!merge) {
                if (current != null) {
                    entries.add(current.build(group));
                }
                current = new Builder(thread.job());
            }
            current.add(thread);
        }
        if (current != null) {
            entries.add(current.build(group));
        }
        return entries;
    }

    /** @return completion latencies of reads and writes together (fio's latency distribution) */
    public LatencyStats allLatencies() {
        LatencyStats all = read.clat().copy();
        all.add(write.clat());
        return all;
    }

    /**
     * @param stats a direction
     * @return bytes per second over the measured phase
     */
    public double bandwidth(DirectionStats stats) {
        return runtimeNanos == 0 ? 0 : stats.bytes() * 1e9 / runtimeNanos;
    }

    /**
     * @param stats a direction
     * @return I/Os per second over the measured phase
     */
    public double iops(DirectionStats stats) {
        return runtimeNanos == 0 ? 0 : stats.ios() * 1e9 / runtimeNanos;
    }

    /** @return the runtime in whole milliseconds, as fio reports it */
    public long runtimeMillis() {
        return runtimeNanos / 1_000_000;
    }

    private static final class Builder {
        final JobSpec job;
        final DirectionStats read = new DirectionStats();
        final DirectionStats write = new DirectionStats();
        final LatencyStats sync = new LatencyStats();
        int jobs;
        long runtime;
        long totalRuntime;
        long user;
        long system;
        Instant finished = Instant.EPOCH;
        Optional<String> error = Optional.empty();

        Builder(JobSpec job) {
            this.job = job;
        }

        void add(ThreadResult thread) {
            jobs++;
            read.add(thread.read());
            write.add(thread.write());
            sync.add(thread.sync());
            runtime = Math.max(runtime, thread.runtimeNanos());
            totalRuntime += thread.runtimeNanos();
            user += thread.userCpuNanos();
            system += thread.systemCpuNanos();
            finished = thread.finished().isAfter(finished) ? thread.finished() : finished;
            error = error.or(thread::error);
        }

        ReportEntry build(GroupResult group) {
            return new ReportEntry(job.name(), group.groupId(), jobs, job, read, write, sync, runtime, totalRuntime,
                    user, system, finished, error, group.iomap());
        }
    }
}
