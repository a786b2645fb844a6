package dev.iomap.cluster;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A {@link FenceAgent} that runs a program, the way cluster managers run fence agents: no arguments,
 * options as {@code name=value} lines on its standard input ({@code action=off}, {@code plug=NODE_ID}
 * naming the node to fence, and {@code incarnation=NODE.N}), and exit status 0 when the node is fenced.
 * Anything else, or no exit within the timeout (the program is then killed), is a failure carrying the
 * program's last output. Thread-safe.
 *
 * @param program the agent's executable
 * @param timeout how long one run may take
 */
public record ProgramFenceAgent(Path program, Duration timeout) implements FenceAgent {
    /** How long a run may take unless said otherwise. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
    private static final int OUTPUT_KEPT = 2000;

    /** Validates. */
    public ProgramFenceAgent {
        Objects.requireNonNull(program, "program");
        Objects.requireNonNull(timeout, "timeout");
    }

    /**
     * @param program the agent's executable
     * @return an agent with {@link #DEFAULT_TIMEOUT}
     */
    public static ProgramFenceAgent of(Path program) {
        return new ProgramFenceAgent(program, DEFAULT_TIMEOUT);
    }

    /**
     * Runs the program with {@code action=off}, {@code plug=NODE_ID} and {@code incarnation=NODE.N}.
     *
     * @throws IOException if it could not start, exited other than 0, or ran past the timeout
     */
    @Override
    public void fence(Incarnation dead) throws IOException {
        String input = "action=off\nplug=" + dead.nodeId() + "\nincarnation=" + dead + "\n";
        Process process = new ProcessBuilder(program.toString()).redirectErrorStream(true).start();
        try (OutputStream in = process.getOutputStream()) {
            in.write(input.getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            // the agent ended without reading its options; its exit status says how it went
        }
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        Thread reader = Thread.ofVirtual().start(() -> drain(process.getInputStream(), output));
        try {
            if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                process.destroyForcibly();
                throw new IOException("fence agent " + program + " did not fence " + dead + " within "
                        + timeout.toSeconds() + " s; its output: " + tail(output));
            }
            reader.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while fencing " + dead);
        }
        if (process.exitValue() != 0) {
            throw new IOException("fence agent " + program + " failed to fence " + dead + " (exit status "
                    + process.exitValue() + "): " + tail(output));
        }
    }

    private static void drain(InputStream from, ByteArrayOutputStream to) {
        byte[] buffer = new byte[4096];
        try (from) {
            for (int n; (n = from.read(buffer)) > 0; ) {
                synchronized (to) {
                    to.write(buffer, 0, n);
                }
            }
        } catch (IOException e) {
            // the process ended
        }
    }

    private static String tail(ByteArrayOutputStream output) {
        String text;
        synchronized (output) {
            text = output.toString(StandardCharsets.UTF_8).strip();
        }
        if (text.isEmpty()) {
            return "(no output)";
        }
        return text.length() <= OUTPUT_KEPT ? text : "..." + text.substring(text.length() - OUTPUT_KEPT);
    }
}
