package dev.iomap.cli.bench;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.RwFlag;
import dev.iomap.cli.jobfile.JobSpec;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One thread of a job: fio's psync engine over the mounted filesystem (or, for an asynchronous engine,
 * {@code iodepth} of them in flight: see {@code QueuedRun}). Positional reads and writes
 * of one block at a time, round robin over the thread's files, sequential or in random order (each
 * block once per pass), an fsync or fdatasync after every N writes; only I/O issued after the ramp
 * time is measured. The counters for the progress line are the only state other threads read.
 */
final class Worker implements Callable<ThreadResult> {
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    private final IomapFileSystem fs;
    private final JobSpec job;
    /** The flags of every read and write: {@link RwFlag#DONTCACHE} for {@code uncached=1}. */
    private final Set<RwFlag> rwFlags;
    private final int thread;
    private final StartGate gate;
    private final CountDownLatch finished;
    private final SplittableRandom random;
    private final AtomicLong bytesRead = new AtomicLong();
    private final AtomicLong bytesWritten = new AtomicLong();
    private final AtomicLong iosRead = new AtomicLong();
    private final AtomicLong iosWritten = new AtomicLong();
    private volatile boolean running = true;

    private final DirectionStats read = new DirectionStats();
    private final DirectionStats write = new DirectionStats();
    private final LatencyStats sync = new LatencyStats();
    private final List<ThreadFile> files = new ArrayList<>();
    private final boolean resetZones;
    /** Whether every write is an atomic write ({@code atomic=1}). */
    private final boolean atomic;
    private int nextFile;
    private long writesIssued;
    private boolean measuring;
    /**
     * When the last I/O of the synchronous loop (or the sync after it) ended: the loop's clock for its
     * deadline and ramp checks, so that an I/O costs two clock reads (issue and completion, as fio's),
     * not three; a clock read is ~27 ns on this kind of VM, a tenth of a cached 1 KiB write.
     */
    private long lastCompletion;
    private long measureStart;
    private long userCpuStart;
    private long cpuStart;

    /** A file as one thread sees it: its handle and its offset sequences. */
    private record ThreadFile(IomapFile file, OffsetSequence reads, OffsetSequence writes) {
    }

    /**
     * @param fs the mounted filesystem
     * @param job the job
     * @param thread the thread's number in the job
     * @param gate where the job's threads start together
     * @param finished counted down when this thread ends
     * @param resetZones whether the filesystem is on a zoned device: a sequential write that comes back
     *     to offset 0 of a file holding data (the next pass) first truncates the file to 0, which
     *     resets a sequential zone file's zone, as fio's {@code zonemode=zbd} resets a zone it wraps in
     */
    Worker(IomapFileSystem fs, JobSpec job, int thread, StartGate gate, CountDownLatch finished, boolean resetZones) {
        this.resetZones = resetZones;
        this.fs = fs;
        this.job = job;
        this.rwFlags = job.uncached() ? EnumSet.of(RwFlag.DONTCACHE) : EnumSet.noneOf(RwFlag.class);
        this.atomic = job.atomic().isPresent();
        this.thread = thread;
        this.gate = gate;
        this.finished = finished;
        this.random = new SplittableRandom(job.io().randomSeed() + thread);
    }

    @Override
    public ThreadResult call() throws InterruptedException {
        try {
            Optional<String> error = Optional.empty();
            try {
                openFiles();
            } catch (IOException e) {
                error = Optional.of(describe(e));
            } finally {
                gate.ready();
            }
            long start = gate.awaitStart();
            if (error.isEmpty()) {
                try {
                    run(start);
                } catch (IOException e) {
                    error = Optional.of(describe(e));
                }
            }
            long end = System.nanoTime();
            error = closeFiles(error);
            return result(end, error);
        } finally {
            running = false;
            finished.countDown();
        }
    }

    private void openFiles() throws IOException {
        long fileSize = job.files().fileSize();
        for (String path : job.files().paths(job.name(), thread)) {
            IomapFile file = job.directIo().isPresent() ? fs.open(path, EnumSet.of(OpenFlag.DIRECT)) : fs.open(path);
            files.add(new ThreadFile(file,
                    OffsetSequence.of(fileSize, job.io().readBlockSize(), job.io().rw().random(), random),
                    OffsetSequence.of(fileSize, job.io().writeBlockSize(), job.io().rw().random(), random)));
        }
    }

    private void run(long start) throws IOException {
        int depth = resetZones ? 1 : job.queueDepth();
        if (depth > 1) {
            new QueuedRun(depth).run(start);
            return;
        }
        JobSpec.Timing timing = job.timing();
        long rampEnd = start + timing.rampTime().toNanos();
        boolean limited = !timing.runtime().isZero();
        long deadline = rampEnd + timing.runtime().toNanos();
        ByteBuffer writeBuffer = Filler.buffer(job.io().writeBlockSize(), random);
        ByteBuffer readBuffer = ByteBuffer.allocateDirect(job.io().readBlockSize());
        if (timing.rampTime().isZero()) {
            startMeasuring(start);
        }
        lastCompletion = System.nanoTime();
        for (int pass = 0; timing.timeBased() || pass < timing.loops(); pass++) {
            for (long left = job.files().ioSize(); left > 0; ) {
                long now = lastCompletion;
                if (limited && now - deadline >= 0) {
                    finishWriting();
                    return;
                }
                if (!measuring && now - rampEnd >= 0) {
                    startMeasuring(now);
                }
                boolean isRead = chooseRead();
                ThreadFile file = files.get(nextFile);
                nextFile = (nextFile + 1) % files.size();
                left -= isRead ? read(file, readBuffer) : write(file, writeBuffer);
            }
        }
        finishWriting();
    }

    private boolean chooseRead() {
        var rw = job.io().rw();
        if (!rw.mixed()) {
            return rw.reads();
        }
        return random.nextInt(100) < job.io().rwmixread();
    }

    private int read(ThreadFile file, ByteBuffer buffer) throws IOException {
        long offset = file.reads().next();
        buffer.clear();
        long before = System.nanoTime();
        file.file().read(offset, buffer, rwFlags);
        lastCompletion = System.nanoTime();
        long latency = lastCompletion - before;
        int length = buffer.capacity();
        if (measuring) {
            read.record(length, latency);
        }
        bytesRead.lazySet(bytesRead.get() + length);
        iosRead.lazySet(iosRead.get() + 1);
        return length;
    }

    private int write(ThreadFile file, ByteBuffer buffer) throws IOException {
        long offset = file.writes().next();
        buffer.clear();
        long before = System.nanoTime();
        if (resetZones && offset == 0 && !job.io().rw().random() && file.file().size() > 0) {
            file.file().truncate(0);
        }
        if (atomic) {
            file.file().writeAtomic(offset, buffer);
        } else {
            file.file().write(offset, buffer, rwFlags);
        }
        lastCompletion = System.nanoTime();
        long latency = lastCompletion - before;
        int length = buffer.capacity();
        if (measuring) {
            write.record(length, latency);
        }
        bytesWritten.lazySet(bytesWritten.get() + length);
        iosWritten.lazySet(iosWritten.get() + 1);
        writesIssued++;
        JobSpec.SyncPolicy policy = job.sync();
        if (policy.fsyncEvery() > 0 && writesIssued % policy.fsyncEvery() == 0) {
            timedSync(file.file(), false);
        }
        if (policy.fdatasyncEvery() > 0 && writesIssued % policy.fdatasyncEvery() == 0) {
            timedSync(file.file(), true);
        }
        return length;
    }

    /**
     * An asynchronous engine's thread ({@link JobSpec#queueDepth()} above 1): {@code depth} requests in
     * flight, each issued as soon as one completes, by {@code depth} submitters (this thread and
     * {@code depth - 1} more) that take the next request (file, offset, read or write) from the job's
     * one sequence under the worker's lock and do the I/O outside it, as {@code io_uring}'s kernel
     * workers run the I/O of one submission queue. An fsync or fdatasync due after the N-th write is
     * issued by the submitter of that write when it completes. The CPU time of the other submitters
     * is added to this thread's. Not used on a zoned device, whose sequential files take one write at
     * a time at the write pointer.
     */
    private final class QueuedRun {
        private final int depth;
        private long left;
        private int pass;
        private boolean done;
        private long extraUser;
        private long extraCpu;
        private IOException failure;
        /** The worker's own thread, whose CPU time the result counts (the others' is added). */
        private final long owner = Thread.currentThread().threadId();

        QueuedRun(int depth) {
            this.depth = depth;
        }

        /** A request taken from the sequence: which file, where, and whether a sync follows it. */
        private record Request(ThreadFile file, long offset, boolean isRead, boolean fsync, boolean fdatasync) {
        }

        void run(long start) throws IOException {
            JobSpec.Timing timing = job.timing();
            long rampEnd = start + timing.rampTime().toNanos();
            long deadline = rampEnd + timing.runtime().toNanos();
            if (timing.rampTime().isZero()) {
                startMeasuring(start);
            }
            left = job.files().ioSize();
            List<Thread> submitters = new ArrayList<>();
            for (int i = 1; i < depth; i++) {
                SplittableRandom own = random.split();
                submitters.add(Thread.ofPlatform().name("bench-" + job.name() + "." + thread + "-q" + i)
                        .start(() -> submit(rampEnd, deadline, own, true)));
            }
            submit(rampEnd, deadline, random.split(), false);
            for (Thread submitter : submitters) {
                try {
                    submitter.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while the submitters of " + job.name() + " finished", e);
                }
            }
            synchronized (Worker.this) {
                userCpuStart -= extraUser;
                cpuStart -= extraCpu;
                if (failure != null) {
                    throw failure;
                }
            }
            finishWriting();
        }

        /** One submitter: takes requests until the job is done or failed. */
        private void submit(long rampEnd, long deadline, SplittableRandom own, boolean extra) {
            long user = CPU.getCurrentThreadUserTime();
            long cpu = CPU.getCurrentThreadCpuTime();
            ByteBuffer writeBuffer = Filler.buffer(job.io().writeBlockSize(), own);
            ByteBuffer readBuffer = ByteBuffer.allocateDirect(job.io().readBlockSize());
            try {
                for (Request request = next(rampEnd, deadline); request != null; request = next(rampEnd, deadline)) {
                    ByteBuffer buffer = request.isRead() ? readBuffer : writeBuffer;
                    buffer.clear();
                    long before = System.nanoTime();
                    if (request.isRead()) {
                        request.file().file().read(request.offset(), buffer, rwFlags);
                    } else if (atomic) {
                        request.file().file().writeAtomic(request.offset(), buffer);
                    } else {
                        request.file().file().write(request.offset(), buffer, rwFlags);
                    }
                    long latency = System.nanoTime() - before;
                    completed(request.isRead(), buffer.capacity(), latency);
                    if (request.fsync()) {
                        queuedSync(request.file().file(), false);
                    }
                    if (request.fdatasync()) {
                        queuedSync(request.file().file(), true);
                    }
                }
            } catch (IOException | RuntimeException e) {
                synchronized (Worker.this) {
                    if (failure == null) {
                        failure = e instanceof IOException io ? io : new IOException(e);
                    }
                    done = true;
                }
            } finally {
                if (extra) {
                    synchronized (Worker.this) {
                        extraUser += CPU.getCurrentThreadUserTime() - user;
                        extraCpu += CPU.getCurrentThreadCpuTime() - cpu;
                    }
                }
            }
        }

        /** @return the next request of the job's sequence, or null when the job is done */
        private Request next(long rampEnd, long deadline) {
            synchronized (Worker.this) {
                JobSpec.Timing timing = job.timing();
                long now = System.nanoTime();
                if (done || (!timing.runtime().isZero() && now - deadline >= 0)) {
                    done = true;
                    return null;
                }
                if (left <= 0) {
                    pass++;
                    if (!timing.timeBased() && pass >= timing.loops()) {
                        done = true;
                        return null;
                    }
                    left = job.files().ioSize();
                }
                if (!measuring && now - rampEnd >= 0) {
                    measuring = true;
                    measureStart = now;
                    userCpuStart = CPU.getThreadUserTime(owner);
                    cpuStart = CPU.getThreadCpuTime(owner);
                }
                boolean isRead = chooseRead();
                ThreadFile file = files.get(nextFile);
                nextFile = (nextFile + 1) % files.size();
                long offset = isRead ? file.reads().next() : file.writes().next();
                left -= isRead ? job.io().readBlockSize() : job.io().writeBlockSize();
                boolean fsync = false;
                boolean fdatasync = false;
                if (!isRead) {
                    writesIssued++;
                    JobSpec.SyncPolicy policy = job.sync();
                    fsync = policy.fsyncEvery() > 0 && writesIssued % policy.fsyncEvery() == 0;
                    fdatasync = policy.fdatasyncEvery() > 0 && writesIssued % policy.fdatasyncEvery() == 0;
                }
                return new Request(file, offset, isRead, fsync, fdatasync);
            }
        }

        private void completed(boolean isRead, int length, long latency) {
            synchronized (Worker.this) {
                if (measuring) {
                    (isRead ? read : write).record(length, latency);
                }
                AtomicLong bytes = isRead ? bytesRead : bytesWritten;
                AtomicLong ios = isRead ? iosRead : iosWritten;
                bytes.lazySet(bytes.get() + length);
                ios.lazySet(ios.get() + 1);
            }
        }

        private void queuedSync(IomapFile file, boolean dataOnly) throws IOException {
            long before = System.nanoTime();
            if (dataOnly) {
                file.fdatasync();
            } else {
                file.fsync();
            }
            long latency = System.nanoTime() - before;
            synchronized (Worker.this) {
                if (measuring) {
                    sync.record(latency);
                }
            }
        }
    }

    private void timedSync(IomapFile file, boolean dataOnly) throws IOException {
        long before = System.nanoTime();
        if (dataOnly) {
            file.fdatasync();
        } else {
            file.fsync();
        }
        lastCompletion = System.nanoTime();
        if (measuring) {
            sync.record(lastCompletion - before);
        }
    }

    /** fio's end_fsync: part of the measured runtime, not of the sync latencies. */
    private void finishWriting() throws IOException {
        if (job.sync().endFsync() && writesIssued > 0) {
            for (ThreadFile file : files) {
                file.file().fsync();
            }
        }
    }

    private void startMeasuring(long now) {
        measuring = true;
        measureStart = now;
        userCpuStart = CPU.getCurrentThreadUserTime();
        cpuStart = CPU.getCurrentThreadCpuTime();
    }

    private Optional<String> closeFiles(Optional<String> error) {
        Optional<String> result = error;
        for (ThreadFile file : files) {
            try {
                if (job.sync().fsyncOnClose() && writesIssued > 0) {
                    file.file().fsync();
                }
                file.file().close();
            } catch (IOException e) {
                if (result.isEmpty()) {
                    result = Optional.of(describe(e));
                }
            }
        }
        return result;
    }

    private ThreadResult result(long end, Optional<String> error) {
        long runtime = measuring ? end - measureStart : 0;
        long user = measuring ? CPU.getCurrentThreadUserTime() - userCpuStart : 0;
        long cpu = measuring ? CPU.getCurrentThreadCpuTime() - cpuStart : 0;
        return new ThreadResult(job, thread, read, write, sync, runtime, user, Math.max(0, cpu - user),
                Instant.now(), error);
    }

    private static String describe(IOException e) {
        String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    /** @return bytes read so far, measured or not (for the progress line) */
    long bytesRead() {
        return bytesRead.get();
    }

    /** @return bytes written so far */
    long bytesWritten() {
        return bytesWritten.get();
    }

    /** @return reads so far */
    long iosRead() {
        return iosRead.get();
    }

    /** @return writes so far */
    long iosWritten() {
        return iosWritten.get();
    }

    /** @return whether the thread is still working */
    boolean running() {
        return running;
    }

    /** @return the job */
    JobSpec job() {
        return job;
    }
}
