package dev.iomap.cli.bench;

import dev.iomap.cli.jobfile.JobSpec;
import dev.iomap.cli.report.FioFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * fio's status line, {@code Jobs: 8 (f=8): [w(8)][25.0%][w=28.2MiB/s][w=7216 IOPS][eta 00m:45s]}:
 * threads running, each thread's state ({@code W}/{@code w} sequential/random writes, {@code R}/
 * {@code r} reads, {@code M}/{@code m} mixed, {@code _} done), the share done, the rates since the
 * previous line, the time left. Used by the runner's thread only.
 */
final class ProgressLine {
    private final List<Worker> workers;
    private final long start;
    private long lastNanos;
    private long lastRead;
    private long lastWritten;
    private long lastReadIos;
    private long lastWriteIos;

    /**
     * @param workers the group's threads
     * @param start when the group started ({@link System#nanoTime()})
     */
    ProgressLine(List<Worker> workers, long start) {
        this.workers = workers;
        this.start = start;
        this.lastNanos = start;
    }

    /** @return the line now, with rates since the previous call */
    String next() {
        long now = System.nanoTime();
        long read = 0;
        long written = 0;
        long readIos = 0;
        long writeIos = 0;
        for (Worker worker : workers) {
            read += worker.bytesRead();
            written += worker.bytesWritten();
            readIos += worker.iosRead();
            writeIos += worker.iosWritten();
        }
        double seconds = Math.max(1e-9, (now - lastNanos) / 1e9);
        String rates = rates(read - lastRead, written - lastWritten, seconds, false);
        String iops = rates(readIos - lastReadIos, writeIos - lastWriteIos, seconds, true);
        double done = fractionDone(now, read + written);
        lastNanos = now;
        lastRead = read;
        lastWritten = written;
        lastReadIos = readIos;
        lastWriteIos = writeIos;
        long running = workers.stream().filter(Worker::running).count();
        return "Jobs: " + running + " (f=" + running + "): [" + states() + "]["
                + String.format(Locale.ROOT, "%.1f%%", 100 * done) + "][" + rates + "][" + iops
                + " IOPS][eta " + eta(now, done) + "]";
    }

    private String rates(long readAmount, long writeAmount, double seconds, boolean isIops) {
        List<String> parts = new ArrayList<>();
        if (readAmount > 0) {
            parts.add("r=" + format((long) (readAmount / seconds), isIops));
        }
        if (writeAmount > 0 || parts.isEmpty()) {
            parts.add("w=" + format((long) (writeAmount / seconds), isIops));
        }
        return String.join(",", parts);
    }

    private static String format(long value, boolean isIops) {
        return isIops ? FioFormat.num2str(value, 4, false, "") : FioFormat.num2str(value, 4, true, "B/s");
    }

    private double fractionDone(long now, long bytes) {
        double byTime = 0;
        double expected = 0;
        for (Worker worker : workers) {
            JobSpec.Timing timing = worker.job().timing();
            if (!timing.runtime().isZero()) {
                double limit = timing.rampTime().toNanos() + timing.runtime().toNanos();
                byTime = Math.max(byTime, Math.min(1, (now - start) / limit));
            }
            if (!timing.timeBased()) {
                expected += (double) worker.job().files().ioSize() * timing.loops();
            }
        }
        double byBytes = expected == 0 ? 0 : Math.min(1, bytes / expected);
        return Math.max(byTime, byBytes);
    }

    private String eta(long now, double done) {
        if (done <= 0) {
            return "--m:--s";
        }
        long seconds = (long) ((now - start) / 1e9 * (1 - done) / done);
        return String.format(Locale.ROOT, "%02dm:%02ds", seconds / 60, seconds % 60);
    }

    private String states() {
        var out = new StringBuilder();
        char previous = 0;
        int run = 0;
        for (Worker worker : workers) {
            char state = worker.running() ? state(worker.job()) : '_';
            if (state != previous && run > 0) {
                out.append(out.isEmpty() ? "" : ",").append(previous).append('(').append(run).append(')');
                run = 0;
            }
            previous = state;
            run++;
        }
        out.append(out.isEmpty() ? "" : ",").append(previous).append('(').append(run).append(')');
        return out.toString();
    }

    private static char state(JobSpec job) {
        var rw = job.io().rw();
        char c = rw.mixed() ? 'm' : rw.reads() ? 'r' : 'w';
        return rw.random() ? c : Character.toUpperCase(c);
    }
}
