package dev.iomap.testbed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The test bed as the driver sees it: the nodes' mount points and logs under the test bed's directory,
 * and its steps, each one call of {@code bench/cluster-hosts.sh fault ...}. Thread-safe.
 *
 * @param dir the test bed's directory ({@code $IOMAP_TESTBED_DIR})
 * @param script {@code bench/cluster-hosts.sh}
 * @param probeOffset where on the export the fencing probe writes (past the filesystem)
 * @param image the export's file on the storage host
 */
public record TestBed(Path dir, Path script, long probeOffset, Path image) {
    /** The nodes. */
    public static final List<String> NODES = List.of("n1", "n2", "n3");

    /** @return the test bed the script described in system properties ({@code testbed.*}) */
    public static TestBed fromProperties() {
        return new TestBed(Path.of(System.getProperty("testbed.dir")), Path.of(System.getProperty("testbed.script")),
                Long.parseLong(System.getProperty("testbed.probeOffset")), Path.of(System.getProperty("testbed.image")));
    }

    /** @return node {@code node}'s mount point */
    public Path mount(String node) {
        return dir.resolve("mnt").resolve(node);
    }

    /** What a step printed and how it ended. */
    public record Outcome(int status, String output) {
        /** @return whether it exited 0 */
        public boolean ok() {
            return status == 0;
        }
    }

    /**
     * Runs one step and waits for it (at most 5 minutes).
     *
     * @param args e.g. {@code kill-node n1}
     * @return its exit status and output (standard output and error together)
     * @throws IOException if it cannot run
     */
    public Outcome step(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(script.toString(), "fault"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(5, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new IOException("step " + String.join(" ", args) + " did not end");
            }
            return new Outcome(process.exitValue(), new String(output, StandardCharsets.UTF_8).strip());
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted during step " + String.join(" ", args));
        }
    }

    /**
     * Runs one step that must succeed.
     *
     * @return its output
     * @throws IOException if it failed
     */
    public String must(String... args) throws IOException {
        Outcome outcome = step(args);
        if (!outcome.ok()) {
            throw new IOException("step " + String.join(" ", args) + " failed: " + outcome.output());
        }
        return outcome.output();
    }

    /**
     * Starts a step in the background (the fencing probe that holds a connection).
     *
     * @return its process
     * @throws IOException if it cannot start
     */
    public Process background(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(script.toString(), "fault"));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("logs").resolve("background.log").toFile()).start();
    }

    /**
     * @return the fence agent's log: {@code {epochNanos, action, node}} per line
     * @throws IOException if it cannot be read
     */
    public List<String[]> fenceLog() throws IOException {
        Path log = dir.resolve("fence.log");
        List<String[]> entries = new ArrayList<>();
        if (Files.exists(log)) {
            for (String line : Files.readAllLines(log)) {
                String[] f = line.split(" ");
                if (f.length >= 3) {
                    entries.add(new String[] {f[0], f[1], f[2]});
                }
            }
        }
        return entries;
    }

    /** @return node {@code node}'s log (its mounts' standard error), or "" */
    public String nodeLog(String node) throws IOException {
        Path log = dir.resolve("logs").resolve(node + ".err");
        return Files.exists(log) ? Files.readString(log) : "";
    }
}
