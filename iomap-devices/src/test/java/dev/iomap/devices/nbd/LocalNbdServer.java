package dev.iomap.devices.nbd;

import dev.iomap.devices.LoopbackPorts;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A real NBD server for tests, on 127.0.0.1 and a free port: Debian's {@code nbd-server} (one
 * configuration, any number of exports, each a sparse file) or {@code qemu-nbd} (one export). Started
 * by {@link #start}, stopped by {@link #close()} (every process it started, also the per-connection
 * children nbd-server forks); {@link #kill()} stops it as a crash would (SIGKILL) and {@link #restart()}
 * starts it again on the same port and files. The export files live in the directory given and are left
 * there (a test's temporary directory).
 */
public final class LocalNbdServer implements AutoCloseable {
    /** Which server program. */
    public enum Kind {
        /** Debian's nbd-server (nbd-server 3.x): fixed newstyle, NBD_OPT_GO, simple replies. */
        NBD_SERVER("nbd-server"),
        /** qemu-nbd: also structured replies. */
        QEMU_NBD("qemu-nbd");

        private final String program;

        Kind(String program) {
            this.program = program;
        }

        /** @return whether the program is installed (on the PATH) */
        public boolean installed() {
            for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/usr/sbin").split(":")) {
                if (Files.isExecutable(Path.of(dir, program))) {
                    return true;
                }
            }
            return Files.isExecutable(Path.of("/usr/sbin", program));
        }
    }

    private static final Duration START_TIMEOUT = Duration.ofSeconds(20);

    private final Kind kind;
    private final Path dir;
    private final Map<String, Path> exports;
    private final int port;
    /** The processes to stop: qemu-nbd itself; nbd-server's daemon (its children are found at stop time). */
    private final List<ProcessHandle> processes = new ArrayList<>();

    private LocalNbdServer(Kind kind, Path dir, Map<String, Path> exports, int port) {
        this.kind = kind;
        this.dir = dir;
        this.exports = exports;
        this.port = port;
    }

    /**
     * Creates a sparse export file of {@code bytes} bytes per name in {@code dir} and serves them.
     *
     * @param kind the server program (qemu-nbd serves one export only)
     * @param dir where the export files and the configuration go
     * @param bytes each export's size
     * @param names the exports' names
     * @return the running server, which the caller must close
     * @throws IOException if it does not start
     */
    public static LocalNbdServer start(Kind kind, Path dir, long bytes, String... names) throws IOException {
        if (kind == Kind.QEMU_NBD && names.length != 1) {
            throw new IllegalArgumentException("qemu-nbd serves one export");
        }
        Map<String, Path> exports = new LinkedHashMap<>();
        for (String name : names) {
            Path file = dir.resolve(name + ".img");
            try (var raf = new RandomAccessFile(file.toFile(), "rw")) {
                raf.setLength(bytes);
            }
            exports.put(name, file);
        }
        IOException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            var server = new LocalNbdServer(kind, dir, exports, LoopbackPorts.reserve());
            try {
                server.launch();
                return server;
            } catch (IOException e) {
                server.close();
                last = e;
            }
        }
        throw last;
    }

    /** @return the port it listens on, on 127.0.0.1 */
    public int port() {
        return port;
    }

    /**
     * @param name one of the exports
     * @return its address, with the default options
     */
    public NbdExport export(String name) {
        return NbdExport.of("127.0.0.1", port, name);
    }

    /**
     * @param name one of the exports
     * @return the file behind it
     */
    public Path file(String name) {
        return exports.get(name);
    }

    /** Stops every process at once with SIGKILL, as a crash would; the files stay. Idempotent. */
    public void kill() {
        List<ProcessHandle> all = new ArrayList<>();
        for (ProcessHandle process : processes) {
            all.addAll(process.descendants().toList());
            all.add(process);
        }
        all.forEach(ProcessHandle::destroyForcibly);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (ProcessHandle process : all) {
            while (running(process)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("NBD server process " + process.pid() + " did not die");
                }
                LockSupport.parkNanos(2_000_000);
            }
        }
        processes.clear();
    }

    /**
     * Starts the server again on the same port and files, after {@link #kill()}.
     *
     * @throws IOException if it does not start
     */
    public void restart() throws IOException {
        kill();
        launch();
    }

    /** Stops it (as {@link #kill()}). */
    @Override
    public void close() {
        kill();
    }

    private void launch() throws IOException {
        if (kind == Kind.NBD_SERVER) {
            launchNbdServer();
        } else {
            launchQemuNbd();
        }
        awaitListening();
    }

    private void launchNbdServer() throws IOException {
        StringBuilder config = new StringBuilder("[generic]\n    listenaddr = 127.0.0.1\n    port = " + port
                + "\n    allowlist = true\n");
        exports.forEach((name, file) -> config.append('[').append(name).append("]\n    exportname = ").append(file)
                .append("\n    flush = true\n    fua = true\n    trim = true\n"));
        Path configFile = dir.resolve("nbd-server-" + port + ".conf");
        Path pidFile = dir.resolve("nbd-server-" + port + ".pid");
        Files.writeString(configFile, config, StandardCharsets.UTF_8);
        Files.deleteIfExists(pidFile);
        Process launcher = new ProcessBuilder("nbd-server", "-C", configFile.toString(), "-p", pidFile.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("nbd-server-" + port + ".log").toFile())
                .start();
        try {
            if (!launcher.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS) || launcher.exitValue() != 0) {
                launcher.destroyForcibly();
                throw new IOException("nbd-server did not start: " + log());
            }
        } catch (InterruptedException e) {
            launcher.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting nbd-server", e);
        }
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (!Files.exists(pidFile) || Files.readString(pidFile).isBlank()) {
            if (System.nanoTime() > deadline) {
                throw new IOException("nbd-server wrote no pid file: " + log());
            }
            sleep(10);
        }
        long pid = Long.parseLong(Files.readString(pidFile).trim());
        processes.add(ProcessHandle.of(pid).orElseThrow(() -> new IOException("nbd-server exited: " + log())));
    }

    private void launchQemuNbd() throws IOException {
        var entry = exports.entrySet().iterator().next();
        Process process = new ProcessBuilder("qemu-nbd", "-f", "raw", "-x", entry.getKey(), "-b", "127.0.0.1", "-p",
                Integer.toString(port), "--persistent", "--shared=0", "--discard=unmap", entry.getValue().toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("qemu-nbd-" + port + ".log").toFile()).start();
        processes.add(process.toHandle());
    }

    private void awaitListening() throws IOException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            try (var socket = new Socket()) {
                // Waits for the greeting too: a probe that hangs up at once holds nbd-server up for seconds.
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
                socket.setSoTimeout(5000);
                socket.getInputStream().readNBytes(8);
                socket.getOutputStream().write(new byte[4]);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline || processes.stream().noneMatch(LocalNbdServer::running)) {
                    throw new IOException(kind.program + " is not listening on 127.0.0.1:" + port + ": " + log(), e);
                }
                sleep(20);
            }
        }
    }

    private String log() {
        try (var files = Files.list(dir)) {
            StringBuilder text = new StringBuilder();
            for (Path log : files.filter(f -> f.getFileName().toString().endsWith(port + ".log")).toList()) {
                text.append(Files.readString(log)).append(' ');
            }
            return text.toString().strip();
        } catch (IOException | UncheckedIOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /**
     * @return whether the process still runs: alive and not a zombie (nbd-server's daemon is reparented
     *     to an init that may reap it late, and a zombie serves nothing)
     */
    private static boolean running(ProcessHandle process) {
        if (!process.isAlive()) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
        } catch (IOException | UncheckedIOException e) {
            return process.isAlive(); // no /proc (not Linux), or it is gone
        }
    }


    private static void sleep(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the NBD server", e);
        }
    }
}
