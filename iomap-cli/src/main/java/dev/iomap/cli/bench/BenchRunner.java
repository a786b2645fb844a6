package dev.iomap.cli.bench;

import dev.iomap.device.BlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import dev.iomap.api.Capability;
import dev.iomap.api.FileNames;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IoStats;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.UnrepresentableNameException;
import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.cli.UsageException;
import dev.iomap.cli.jobfile.BenchPlan;
import dev.iomap.cli.jobfile.JobSpec;
import dev.iomap.cli.jobfile.Location;
import dev.iomap.cli.report.FioFormat;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs a plan in process: formats a fresh device with the adapter, mounts it, and runs the groups
 * one after another, each as {@link FileLayout} then one {@link Worker} thread per job thread, all
 * started together. The filesystem's {@link IoStats} are read when the measured phase starts (after
 * the ramp time) and when the last thread ends; the group's result holds the difference.
 *
 * <p>One runner runs one plan at a time.
 */
public final class BenchRunner {
    private static final Duration TICK = Duration.ofSeconds(1);
    /** How often the bandwidth timeline samples (the report's chart). */
    private static final Duration SAMPLE = Duration.ofMillis(200);

    private final BenchSettings settings;
    private final Consumer<String> notices;
    private final Consumer<String> warnings;
    private final Progress progress;

    /**
     * A runner whose warnings go where its notices go.
     *
     * @param settings adapter, device, block size and page-cache options
     * @param notices where fio's informational lines ("Laying out IO file") go
     * @param progress the progress line
     */
    public BenchRunner(BenchSettings settings, Consumer<String> notices, Progress progress) {
        this(settings, notices, notices, progress);
    }

    /**
     * @param settings adapter, device, block size and page-cache options
     * @param notices where fio's informational lines ("Laying out IO file") go
     * @param warnings where lines for standard error go (an image's device refusing {@code O_DIRECT})
     * @param progress the progress line
     */
    public BenchRunner(BenchSettings settings, Consumer<String> notices, Consumer<String> warnings,
            Progress progress) {
        this.settings = settings;
        this.notices = notices;
        this.warnings = warnings;
        this.progress = progress;
    }

    /**
     * @param plan the jobs
     * @return what happened
     * @throws UsageException if the plan asks for what the adapter or device cannot do
     * @throws IOException if formatting, mounting, laying out or unmounting fails
     * @throws InterruptedException if interrupted while the jobs run
     */
    public RunResult run(BenchPlan plan) throws UsageException, IOException, InterruptedException {
        checkDirectIo(plan, settings.adapter());
        checkFileNames(plan);
        long capacity = settings.device().capacityFor(plan.fileBytes(), settings.blockSize());
        if (capacity < plan.fileBytes()) {
            throw new UsageException("the device holds " + FioFormat.num2str(capacity, 4, true, "B")
                    + " but the jobs' files need " + FioFormat.num2str(plan.fileBytes(), 4, true, "B")
                    + ": give a larger size (ram:SIZE, file:PATH,size=SIZE), or none");
        }
        settings.device().checkCapacity(capacity);
        List<GroupResult> groups = new ArrayList<>();
        try (BlockDevice device = openDevice(capacity)) {
            IomapFileSystems.format(settings.adapter(), device, FormatOptions.blockSize(settings.blockSize()));
            try (IomapFileSystem fs = IomapFileSystems.mount(settings.adapter(), device, settings.mountOptions())) {
                FileLayout layout = new FileLayout(fs, notices, settings.zones().isPresent());
                for (List<JobSpec> group : plan.groups()) {
                    layout.prepare(group);
                    groups.add(runGroup(fs, group));
                    unlinkFiles(fs, group);
                }
            }
        }
        return new RunResult(settings, settings.device().describe(capacity), groups, Instant.now());
    }

    /**
     * @param capacity the device's capacity for the jobs
     * @return the device: the spec's, or, with {@link BenchSettings#zones()}, an emulated zoned device
     *     of those zones (as many as {@code capacity} holds, or the image's own) over the spec's device
     */
    private BlockDevice openDevice(long capacity) throws UsageException, IOException {
        int blockSize = settings.blockSize();
        if (settings.zones().isEmpty()) {
            return settings.device().open(capacity, blockSize, warnings);
        }
        ZoneLayout layout = settings.zones().get().layout(capacity, blockSize);
        return ZonedDevice.create(settings.device().open(layout.backingBytes(blockSize), blockSize, warnings),
                layout);
    }

    /**
     * Refuses {@code direct=1} (or {@code buffered=0}) for an adapter without
     * {@link Capability#DIRECT_IO}; with it, the jobs' files are opened with {@link OpenFlag#DIRECT}.
     * Refuses {@code atomic=1} for an adapter without {@link Capability#ATOMIC_WRITES}; with it, every
     * write of the job is an atomic write.
     *
     * @param plan the jobs
     * @param adapter the adapter they would run on
     * @throws UsageException naming the line that asked for direct I/O
     */
    public static void checkDirectIo(BenchPlan plan, String adapter) throws UsageException {
        for (JobSpec job : plan.jobs()) {
            Optional<Location> direct = job.directIo();
            if (direct.isPresent() && !capable(adapter, Capability.DIRECT_IO)) {
                throw new UsageException("direct=1 at " + direct.get() + ": adapter '" + adapter
                        + "' does not support direct I/O (it has no DIRECT_IO capability); use direct=0");
            }
            if (job.atomic().isPresent() && !capable(adapter, Capability.ATOMIC_WRITES)) {
                throw new UsageException("atomic=1 at " + job.atomic().get() + ": adapter '" + adapter
                        + "' does not support atomic writes (it has no ATOMIC_WRITES capability); use atomic=0");
            }
        }
    }

    /** @return whether an adapter of that name, from any plugin on the class path, declares the capability */
    private static boolean capable(String adapter, Capability capability) {
        for (AdapterPlugin plugin : ServiceLoader.load(AdapterPlugin.class)) {
            for (FileSystemAdapter candidate : plugin.adapters()) {
                if (candidate.name().equals(adapter)) {
                    return candidate.capabilities().contains(capability);
                }
            }
        }
        return false;
    }

    /**
     * Refuses a file name the filesystem cannot hold (a path component over
     * {@value FileNames#MAX_NAME_BYTES} bytes, counted as {@link FileNames} counts them, or one that
     * stands for no byte string) before anything is formatted.
     *
     * @param plan the jobs
     * @throws UsageException naming the job and the first 40 characters of the name
     */
    public static void checkFileNames(BenchPlan plan) throws UsageException {
        for (JobSpec job : plan.jobs()) {
            for (int thread = 0; thread < job.numjobs(); thread++) {
                for (String path : job.files().paths(job.name(), thread)) {
                    for (String name : path.split("/")) {
                        checkFileName(job, name);
                    }
                }
            }
        }
    }

    private static void checkFileName(JobSpec job, String name) throws UsageException {
        int bytes;
        try {
            bytes = FileNames.byteLength(name);
        } catch (UnrepresentableNameException e) {
            throw new UsageException("job '" + abbreviated(job.name()) + "': file name '" + abbreviated(name)
                    + "' stands for no byte string (" + e.getReason() + ")");
        }
        if (bytes > FileNames.MAX_NAME_BYTES) {
            throw new UsageException("job '" + abbreviated(job.name()) + "': file name '" + abbreviated(name)
                    + "' is over " + FileNames.MAX_NAME_BYTES + " bytes; use a shorter job name or filename=");
        }
    }

    private static String abbreviated(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }

    private GroupResult runGroup(IomapFileSystem fs, List<JobSpec> jobs) throws InterruptedException {
        int threads = jobs.stream().mapToInt(JobSpec::numjobs).sum();
        StartGate gate = new StartGate(threads);
        CountDownLatch finished = new CountDownLatch(threads);
        List<Worker> workers = new ArrayList<>();
        for (JobSpec job : jobs) {
            for (int thread = 0; thread < job.numjobs(); thread++) {
                workers.add(new Worker(fs, job, thread, gate, finished, settings.zones().isPresent()));
            }
        }
        long rampNanos = jobs.stream().mapToLong(job -> job.timing().rampTime().toNanos()).max().orElse(0);
        var factory = Thread.ofPlatform().name(jobs.getFirst().name() + "-", 0).factory();
        try (ExecutorService executor = Executors.newThreadPerTaskExecutor(factory)) {
            List<Future<ThreadResult>> futures = workers.stream().map(executor::submit).toList();
            gate.awaitReady();
            long start = System.nanoTime();
            IoStats before = rampNanos == 0 ? fs.stats() : null;
            gate.open(start);
            Timeline timeline = Timeline.start(workers, start, SAMPLE);
            try (timeline) {
                before = watch(fs, workers, finished, start, rampNanos, before);
            }
            IoStats after = fs.stats();
            progress.clear();
            List<ThreadResult> results = new ArrayList<>();
            for (Future<ThreadResult> future : futures) {
                results.add(resultOf(future));
            }
            return new GroupResult(jobs.getFirst().groupId(), results, delta(before == null ? after : before, after),
                    timeline.samples());
        }
    }

    /** Waits for the threads, reading the stats at the ramp's end and updating the progress line. */
    private IoStats watch(IomapFileSystem fs, List<Worker> workers, CountDownLatch finished, long start,
            long rampNanos, IoStats before) throws InterruptedException {
        IoStats measuredFrom = before;
        ProgressLine line = new ProgressLine(workers, start);
        while (true) {
            long now = System.nanoTime();
            long wait = TICK.toNanos();
            if (measuredFrom == null) {
                long untilRampEnd = start + rampNanos - now;
                if (untilRampEnd <= 0) {
                    measuredFrom = fs.stats();
                } else {
                    wait = Math.min(wait, untilRampEnd);
                }
            }
            if (finished.await(wait, TimeUnit.NANOSECONDS)) {
                return measuredFrom;
            }
            progress.show(Duration.ofNanos(System.nanoTime() - start), line.next());
        }
    }

    private static ThreadResult resultOf(Future<ThreadResult> future) throws InterruptedException {
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("a benchmark thread failed unexpectedly", e.getCause());
        }
    }

    private static void unlinkFiles(IomapFileSystem fs, List<JobSpec> jobs) throws IOException {
        Set<String> removed = new HashSet<>();
        for (JobSpec job : jobs) {
            if (!job.files().unlink()) {
                continue;
            }
            for (int thread = 0; thread < job.numjobs(); thread++) {
                for (String path : job.files().paths(job.name(), thread)) {
                    if (removed.add(path)) {
                        fs.unlink(path);
                    }
                }
            }
        }
    }

    /**
     * @param before the earlier snapshot
     * @param after the later snapshot of the same filesystem
     * @return what happened between them; an adapter counter missing from {@code before} counts from 0
     */
    static IoStats delta(IoStats before, IoStats after) {
        long[] orders = after.foliosByOrder();
        long[] earlier = before.foliosByOrder();
        for (int i = 0; i < orders.length && i < earlier.length; i++) {
            orders[i] -= earlier[i];
        }
        return new IoStats(
                after.appBytesWritten() - before.appBytesWritten(),
                after.appBytesRead() - before.appBytesRead(),
                after.device().minus(before.device()),
                after.mapBlocksCalls() - before.mapBlocksCalls(),
                after.ioends() - before.ioends(),
                after.folioStatesAllocated() - before.folioStatesAllocated(),
                orders,
                counterDelta(before.adapterCounters(), after.adapterCounters()));
    }

    private static Map<String, Long> counterDelta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> delta = new TreeMap<>();
        after.forEach((name, value) -> delta.put(name, value - before.getOrDefault(name, 0L)));
        return delta;
    }
}
