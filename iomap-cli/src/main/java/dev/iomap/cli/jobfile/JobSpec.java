package dev.iomap.cli.jobfile;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.IntStream;

/**
 * One job of a job file with every option resolved ({@code [global]} sections above it, then its
 * own lines, then fio's defaults).
 *
 * @param name the job's name (the section name, or {@code name=})
 * @param groupId the reporting group: a new one for each job file and at each {@code stonewall}
 * @param description {@code description=}, or empty
 * @param numjobs how many threads run this job, each with its own files unless {@code filename=}
 * @param io what each thread does
 * @param files which files, how large, and how they are prepared
 * @param sync when threads fsync
 * @param timing how long
 * @param groupReporting whether this job's threads are reported together with the group's others
 * @param percentiles the latency percentiles reported
 * @param ioengine the engine named in the file: a synchronous one ("psync", "sync") runs positional
 *     I/O one at a time, an asynchronous one ({@link #ASYNC_ENGINES}) keeps iodepth requests in
 *     flight; any other runs as "psync"
 * @param iodepth the depth named in the file (a synchronous engine runs at depth 1)
 * @param directIo where {@code direct=1} (or {@code buffered=0}) was asked for, if it was
 * @param uncached whether {@code uncached=1} was asked for: every read and write is given
 *     {@link dev.iomap.api.RwFlag#DONTCACHE} (fio's {@code RWF_DONTCACHE}; no effect with direct I/O)
 * @param atomic where {@code atomic=1} was asked for, if it was: every write is an atomic write
 *     ({@link dev.iomap.api.IomapFile#writeAtomic}, fio's {@code RWF_ATOMIC}); only with {@code directIo}
 * @param options the job section's own lines, for the JSON output's {@code "job options"}
 */
public record JobSpec(
        String name,
        int groupId,
        String description,
        int numjobs,
        IoPattern io,
        FileSet files,
        SyncPolicy sync,
        Timing timing,
        boolean groupReporting,
        List<Double> percentiles,
        String ioengine,
        int iodepth,
        Optional<Location> directIo,
        boolean uncached,
        Optional<Location> atomic,
        Map<String, String> options) {

    /** The engine the benchmark runs by default: positional reads and writes, one at a time. */
    public static final String ENGINE = "psync";

    /**
     * fio's asynchronous engines, which the benchmark runs as a queue of {@code iodepth} requests in
     * flight per thread (each submitted as soon as one completes, as {@code io_uring} with
     * {@code iodepth_batch=1} does), not one at a time.
     */
    public static final java.util.Set<String> ASYNC_ENGINES = java.util.Set.of("io_uring", "libaio", "posixaio");

    /** @return how many requests a thread of this job keeps in flight: {@code iodepth} for an asynchronous engine, else 1 */
    public int queueDepth() {
        return ASYNC_ENGINES.contains(ioengine) ? iodepth : 1;
    }

    /** Copies and checks. */
    public JobSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(io, "io");
        Objects.requireNonNull(files, "files");
        Objects.requireNonNull(sync, "sync");
        Objects.requireNonNull(timing, "timing");
        percentiles = List.copyOf(percentiles);
        options = Collections.unmodifiableMap(new LinkedHashMap<>(options));
    }

    /**
     * What a thread does.
     *
     * @param rw the pattern
     * @param rwmixread percent of reads in a mixed pattern
     * @param readBlockSize bytes per read
     * @param writeBlockSize bytes per write
     * @param randomSeed the seed of thread 0 (thread {@code n} uses {@code randomSeed + n})
     */
    public record IoPattern(ReadWrite rw, int rwmixread, int readBlockSize, int writeBlockSize, long randomSeed) {
    }

    /**
     * The files of a job.
     *
     * @param names {@code filename=}: files every thread shares; empty for fio's generated
     *     {@code jobname.thread.file} names, a set per thread
     * @param nrfiles files per thread when names are generated
     * @param directories {@code directory=}: absolute directories, thread {@code n} uses
     *     {@code directories[n % size]}
     * @param fileSize bytes per file
     * @param ioSize bytes of I/O per pass over all of a thread's files
     * @param fallocate preallocation at layout
     * @param overwrite whether a write job lays its files out (writes them fully) first
     * @param preRead whether files are read into the cache before the run
     * @param invalidate whether the cache is dropped before the run (ignored with {@code preRead})
     * @param createFsync whether laid-out files are fsynced
     * @param unlink whether files are removed afterwards
     */
    public record FileSet(
            List<String> names,
            int nrfiles,
            List<String> directories,
            long fileSize,
            long ioSize,
            Fallocate fallocate,
            boolean overwrite,
            boolean preRead,
            boolean invalidate,
            boolean createFsync,
            boolean unlink) {

        /** Copies. */
        public FileSet {
            names = List.copyOf(names);
            directories = List.copyOf(directories);
        }

        /**
         * @param jobName the job's name
         * @param thread the thread's number within the job, from 0
         * @return absolute paths of the thread's files
         */
        public List<String> paths(String jobName, int thread) {
            String directory = directories.get(thread % directories.size());
            if (!names.isEmpty()) {
                return names.stream().map(name -> name.startsWith("/") ? name : join(directory, name)).toList();
            }
            String base = jobName.replace('/', '_') + "." + thread + ".";
            return IntStream.range(0, nrfiles)
                    .mapToObj(file -> join(directory, base + file))
                    .toList();
        }

        private static String join(String directory, String name) {
            return directory.equals("/") ? "/" + name : directory + "/" + name;
        }
    }

    /**
     * @param fsyncEvery fsync after every this many writes (0: never)
     * @param fdatasyncEvery fdatasync after every this many writes (0: never)
     * @param endFsync fsync each file when the thread's writing is done (counted in its runtime)
     * @param fsyncOnClose fsync each file when closing it
     */
    public record SyncPolicy(int fsyncEvery, int fdatasyncEvery, boolean endFsync, boolean fsyncOnClose) {
    }

    /**
     * @param runtime the limit of the measured phase (zero: none)
     * @param timeBased whether to go on for the whole runtime, looping over the files
     * @param loops passes over the files when not time based
     * @param rampTime a lead-in not measured
     */
    public record Timing(Duration runtime, boolean timeBased, int loops, Duration rampTime) {
    }

    /** @return whether every thread works on the same files */
    public boolean sharedFiles() {
        return !files.names().isEmpty();
    }
}
