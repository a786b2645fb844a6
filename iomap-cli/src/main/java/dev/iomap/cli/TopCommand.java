package dev.iomap.cli;

import dev.iomap.cli.observe.MountRuntime;
import dev.iomap.cli.observe.ObservationClient;
import dev.iomap.cli.observe.TopScreen;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.LocalTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code iomap top MOUNTPOINT}: a running mount's reads, writes, write amplification, cache hit rate,
 * dirty and writeback bytes, folios by order, ioends and (gfs2-like) glock waits, redrawn in place once a
 * second until q or Ctrl-C, which leave the terminal as it was. {@code --batch} prints plain frames
 * instead, for a pipe or a log.
 */
@Command(name = "top", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"A live per-second view of a running iomap mount: reads, writes, write amplification,"
                + " cache hit rate, dirty and writeback bytes, folios by order, ioends, glock waits (gfs2-like).",
                "q or Ctrl-C quits. Only the user who mounted may attach."})
final class TopCommand implements Callable<Integer> {
    /** The terminal's alternate screen on, cursor hidden. */
    private static final String ENTER = "\033[?1049h\033[?25l";
    /** Cursor shown, the alternate screen off: the terminal as it was. */
    private static final String LEAVE = "\033[?25h\033[?1049l";

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MOUNTPOINT", description = "where iomap mount mounted the image")
    private Path mountPoint;

    @Option(names = {"-b", "--batch"}, description = "print plain frames one after another (no screen control,"
            + " no keys), as top -b does")
    private boolean batch;

    @Option(names = {"-n", "--iterations"}, paramLabel = "N", description = "stop after N frames (default: until"
            + " q, Ctrl-C or the unmount)")
    private int iterations;

    @Override
    @SuppressWarnings("try") // the terminal stays raw while the frames are drawn, and is restored after
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        try (ObservationClient client = ObservationClient.connect(MountRuntime.forCurrentUser(), mountPoint)) {
            client.requestTop();
            if (batch) {
                show(client, out, false);
                return 0;
            }
            try (RawTerminal terminal = RawTerminal.enter(out)) {
                Thread keys = Thread.ofPlatform().daemon().name("iomap-top-keys").start(() -> awaitQuit(client));
                show(client, out, true);
                keys.interrupt();
            }
        }
        return 0;
    }

    /** Draws a frame per snapshot until the stream ends (the mount went, or q closed the connection). */
    private void show(ObservationClient client, PrintWriter out, boolean inPlace) throws IOException {
        Map<String, Double> previous = Map.of();
        long previousNanos = System.nanoTime();
        int frames = 0;
        for (Map<String, Double> current = readOrEnd(client); current != null; current = readOrEnd(client)) {
            long now = System.nanoTime();
            double seconds = previous.isEmpty() ? 1 : Math.max(0.001, (now - previousNanos) / 1e9);
            List<String> lines = TopScreen.render(client.mount(), previous, current, seconds, LocalTime.now(java.time.ZoneId.systemDefault()));
            if (inPlace) {
                StringBuilder frame = new StringBuilder("\033[H");
                lines.forEach(line -> frame.append(line).append("\033[K\r\n"));
                out.print(frame.append("\033[J"));
            } else {
                lines.forEach(out::println);
                out.println();
            }
            out.flush();
            previous = current;
            previousNanos = now;
            if (++frames == iterations) {
                return;
            }
        }
    }

    /** @return the next snapshot, or null once the connection is closed (by q) or ended */
    private static Map<String, Double> readOrEnd(ObservationClient client) throws IOException {
        try {
            return client.readSamples();
        } catch (java.nio.channels.ClosedChannelException e) {
            return null;
        }
    }

    /** Reads keys from the terminal; q (or end of input) closes the connection, which ends the frames. */
    private static void awaitQuit(ObservationClient client) {
        try (InputStream tty = new java.io.FileInputStream("/dev/tty")) {
            int key;
            while ((key = tty.read()) >= 0 && key != 'q' && key != 'Q') {
                // any other key: keep drawing
            }
        } catch (IOException e) {
            // no terminal to read: Ctrl-C still ends it
        }
        try {
            client.close();
        } catch (IOException e) {
            // closing is all that was wanted
        }
    }

    /**
     * The terminal in the mode top needs, and back: keys arrive one at a time without echo
     * ({@code stty -icanon -echo}, signals still on so Ctrl-C works), the alternate screen, no cursor.
     * Closing, or the JVM's shutdown on Ctrl-C, restores the saved {@code stty} settings and the screen.
     */
    private static final class RawTerminal implements AutoCloseable {
        private final PrintWriter out;
        private final String saved;
        private final Thread restoreOnExit;
        private boolean restored;

        private RawTerminal(PrintWriter out, String saved) {
            this.out = out;
            this.saved = saved;
            this.restoreOnExit = new Thread(this::restore, "iomap-top-restore");
            Runtime.getRuntime().addShutdownHook(restoreOnExit);
        }

        static RawTerminal enter(PrintWriter out) throws IOException {
            String saved = stty("-g").strip();
            stty("-icanon", "-echo", "min", "1");
            out.print(ENTER);
            out.flush();
            return new RawTerminal(out, saved);
        }

        private synchronized void restore() {
            if (restored) {
                return;
            }
            restored = true;
            out.print(LEAVE);
            out.flush();
            try {
                stty(saved);
            } catch (IOException e) {
                // the terminal is gone: nothing to restore
            }
        }

        @Override
        public void close() {
            restore();
            try {
                Runtime.getRuntime().removeShutdownHook(restoreOnExit);
            } catch (IllegalStateException e) {
                // shutting down already: the hook restores (it found it done)
            }
        }

        /** Runs {@code stty ARGS} on the controlling terminal and returns what it printed. */
        private static String stty(String... args) throws IOException {
            List<String> command = new java.util.ArrayList<>(List.of("stty"));
            command.addAll(List.of(args));
            Process process = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(
                    new java.io.File("/dev/tty"))).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            try {
                if (process.waitFor() != 0) {
                    throw new IOException("iomap top needs a terminal (stty " + String.join(" ", args) + ": "
                            + output.strip() + "); use --batch for plain frames");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while setting the terminal up", e);
            }
            return output;
        }
    }
}
