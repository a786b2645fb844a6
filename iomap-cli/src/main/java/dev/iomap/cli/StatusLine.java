package dev.iomap.cli;

import dev.iomap.cli.bench.Progress;
import dev.iomap.cli.report.FioFormat;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The progress line of a long command other than bench (mkfs {@code --preallocate}, fsck, fsck
 * {@code --scrub}): once the command has run a second, one line on standard error, rewritten every second
 * ({@link Progress#terminal}) with the bytes done, the rate and, where the total is known, the share done,
 * then erased when the command ends. Only on a terminal ({@link Terminal}, which {@code bin/iomap} tells
 * with {@code -Diomap.stderr.terminal}); elsewhere it prints nothing. {@code -Diomap.progress.after=MILLIS}
 * changes the second of silence (tests use 0: the first line is then shown at once).
 */
final class StatusLine implements AutoCloseable {
    private static final Duration EVERY = Duration.ofSeconds(1);
    private final Progress progress;
    private final String what;
    private final LongSupplier done;
    private final long total;
    private final long start = System.nanoTime();
    private final ScheduledExecutorService ticker;

    private StatusLine(Progress progress, String what, LongSupplier done, long total, Duration after) {
        this.progress = progress;
        this.what = what;
        this.done = done;
        this.total = total;
        if (after.isZero()) {
            tick();
        }
        this.ticker = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("iomap-progress").factory());
        ticker.scheduleAtFixedRate(this::tick, EVERY.toNanos(), EVERY.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Starts the line if standard error is a terminal.
     *
     * @param err standard error
     * @param what what is being done, e.g. {@code preallocating img.img}
     * @param done bytes done so far (read from another thread: must be thread-safe)
     * @param total bytes in all, or 0 if not known beforehand
     * @return the line; close it when the work ends
     */
    static StatusLine start(PrintWriter err, String what, LongSupplier done, long total) {
        Duration after = Duration.ofMillis(Long.getLong("iomap.progress.after", 1000));
        Progress progress = Terminal.stderrIsTerminal() ? Progress.terminal(err, after) : Progress.none();
        return new StatusLine(progress, what, done, total, after);
    }

    private synchronized void tick() {
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        long bytes = done.getAsLong();
        double seconds = Math.max(1e-3, elapsed.toNanos() / 1e9);
        String line = what + ": " + FioFormat.num2str(bytes, 4, true, "B")
                + (total > 0 ? " of " + FioFormat.num2str(total, 4, true, "B")
                        + String.format(Locale.ROOT, " (%.0f%%)", 100.0 * bytes / total) : "")
                + ", " + FioFormat.num2str((long) (bytes / seconds), 4, true, "B/s")
                + String.format(Locale.ROOT, ", %d:%02d", elapsed.toMinutes(), elapsed.toSecondsPart());
        progress.show(elapsed, line);
    }

    /** Stops the line and erases it. */
    @Override
    public synchronized void close() {
        ticker.shutdownNow();
        progress.clear();
    }
}
