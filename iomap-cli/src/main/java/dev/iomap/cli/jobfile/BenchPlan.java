package dev.iomap.cli.jobfile;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the job files ask for: the jobs in order, grouped by {@link JobSpec#groupId()} (groups run
 * one after another, the jobs of a group at the same time), plus notes for the user.
 *
 * @param jobs every job, in file order
 * @param globalOptions the {@code [global]} lines of the files, for the JSON output
 * @param notes warnings such as an engine replaced by {@code psync}
 */
public record BenchPlan(List<JobSpec> jobs, Map<String, String> globalOptions, List<String> notes) {

    /** Copies. */
    public BenchPlan {
        jobs = List.copyOf(jobs);
        globalOptions = Collections.unmodifiableMap(new LinkedHashMap<>(globalOptions));
        notes = List.copyOf(notes);
    }

    /** @return the jobs of each group, groups in order */
    public List<List<JobSpec>> groups() {
        Map<Integer, List<JobSpec>> byGroup = new LinkedHashMap<>();
        for (JobSpec job : jobs) {
            byGroup.computeIfAbsent(job.groupId(), id -> new ArrayList<>()).add(job);
        }
        return List.copyOf(byGroup.values());
    }

    /** @return threads over all jobs */
    public int threads() {
        return jobs.stream().mapToInt(JobSpec::numjobs).sum();
    }

    /**
     * @return bytes of all distinct files the jobs create
     * @throws ArithmeticException if they add up to more than {@link Long#MAX_VALUE} ({@link JobResolver}
     *     refuses such jobs)
     */
    public long fileBytes() {
        Map<String, Long> sizes = new LinkedHashMap<>();
        for (JobSpec job : jobs) {
            for (int thread = 0; thread < job.numjobs(); thread++) {
                for (String path : job.files().paths(job.name(), thread)) {
                    sizes.merge(path, job.files().fileSize(), Math::max);
                }
            }
        }
        return sizes.values().stream().mapToLong(Long::longValue).reduce(0, Math::addExact);
    }
}
