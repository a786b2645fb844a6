package dev.iomap.cli;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import picocli.CommandLine;

/**
 * The mount server ({@code iomap serve DIR}): one JVM that runs the {@code mount}, {@code mkfs},
 * {@code fsck}, {@code stat} and {@code adapters} commands {@code bin/iomap} hands it while
 * {@code IOMAP_SERVER=DIR} is set, each in a thread of its own, so that a mount costs no JVM start and
 * runs on code the JIT has already compiled. A served mount stays in the server until unmounted; its
 * messages after it is up go to the server's standard error.
 *
 * <p>The protocol is files, so that the client is a shell script (bin/iomap) that needs no program beyond
 * coreutils: the client makes a request directory under {@code DIR/new} with {@value #ARGS} (the command
 * line, each argument ended by a NUL byte) and {@value #CWD} (its working directory, which relative paths
 * on the command line are resolved against, {@link WorkingDirectory}), then renames it into
 * {@code DIR/queue}, which the server watches. The server writes the command's standard output and error
 * to {@value #OUT} and {@value #ERR} in the request directory and, last, {@value #STATUS} (the exit status,
 * renamed into place whole): when the command ends, or for a mount once it is mounted (status 0), as a
 * detaching {@code iomap mount} returns. The client prints both, removes the directory and exits with the
 * status. {@code DIR/pid} names the server, so that a client can tell a server that has ended from a slow
 * one. DIR is the server user's alone (mode 700): whoever can write to it runs commands as that user.
 *
 * <p>The server ends on SIGTERM or SIGINT; each mount it serves is then unmounted, written back and left
 * clean (its shutdown hook, as a mount in the foreground).
 */
final class MountServer {

    /** The commands the server runs; any other is refused (status 2), to be run without the server. */
    static final Set<String> SERVED = Set.of("mount", "mkfs", "fsck", "stat", "adapters");

    /** The request's command line, each argument ended by a NUL byte. */
    static final String ARGS = "args";
    /** The client's working directory, as text. */
    static final String CWD = "cwd";
    /** The command's standard output. */
    static final String OUT = "out";
    /** The command's standard error. */
    static final String ERR = "err";
    /** The exit status, decimal; written last. */
    static final String STATUS = "status";

    /** Where clients make their requests before renaming them into {@link #queue}. */
    static final String NEW = "new";
    /** The requests to run. */
    static final String QUEUE = "queue";
    /** The server's process id. */
    static final String PID = "pid";

    /** How long an answered request its client never removed (the client was killed) is kept. */
    private static final Duration ANSWERED_KEPT = Duration.ofMinutes(10);
    /** How often the queue is scanned whole, whatever the watch says (a lost event costs at most this). */
    private static final long SCAN_MILLIS = 1000;

    private final Path dir;
    private final Path queue;
    private final PrintStream log;
    /** The requests taken (by name), until their directories are gone. */
    private final Set<String> taken = ConcurrentHashMap.newKeySet();
    private final AtomicInteger served = new AtomicInteger();

    private MountServer(Path dir, PrintStream log) {
        this.dir = dir;
        this.queue = dir.resolve(QUEUE);
        this.log = log;
    }

    /**
     * Makes DIR a server's: creates it (mode 700) and its {@code new} and {@code queue} directories,
     * drops requests left from a server before, and writes {@code pid}.
     *
     * @param dir the server's directory
     * @param log where the server says what it runs (and served mounts their messages)
     * @return the server, not yet serving
     * @throws UsageException if a server that is still running has DIR
     * @throws IOException if DIR cannot be made or written
     */
    static MountServer open(Path dir, PrintStream log) throws IOException, UsageException {
        dir = dir.toAbsolutePath().normalize();
        try {
            Files.createDirectories(dir.getParent());
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (FileAlreadyExistsException exists) {
            long running = runningPid(dir);
            if (running > 0) {
                throw new UsageException("a mount server already runs in " + dir + " (pid " + running + ")");
            }
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        }
        for (String sub : List.of(NEW, QUEUE)) {
            Path path = dir.resolve(sub);
            deleteTree(path);
            Files.createDirectory(path);
        }
        Path pidTemp = dir.resolve(PID + ".tmp");
        Files.writeString(pidTemp, ProcessHandle.current().pid() + "\n", StandardCharsets.US_ASCII);
        Files.move(pidTemp, dir.resolve(PID), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return new MountServer(dir, log);
    }

    /**
     * @param dir a server's directory
     * @return the process id its {@code pid} file names, if that process is alive; 0 otherwise
     */
    static long runningPid(Path dir) {
        try {
            long pid = Long.parseLong(Files.readString(dir.resolve(PID), StandardCharsets.US_ASCII).strip());
            return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).isPresent() ? pid : 0;
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }

    /** @return the server's directory */
    Path dir() {
        return dir;
    }

    /**
     * Serves requests until interrupted: watches the queue, and scans it whole every second besides.
     *
     * @throws IOException if the queue cannot be watched or read
     * @throws InterruptedException if interrupted (how the server stops serving; its mounts stay)
     */
    void serve() throws IOException, InterruptedException {
        log.println("iomap serve: serving " + dir + " (pid " + ProcessHandle.current().pid() + "); IOMAP_SERVER=" + dir
                + " hands bin/iomap's " + String.join(", ", SERVED.stream().sorted().toList()) + " to it");
        log.flush();
        try (WatchService watch = queue.getFileSystem().newWatchService()) {
            queue.register(watch, StandardWatchEventKinds.ENTRY_CREATE);
            while (!Thread.currentThread().isInterrupted()) {
                scan();
                WatchKey key = watch.poll(SCAN_MILLIS, TimeUnit.MILLISECONDS);
                if (key != null) {
                    key.pollEvents();
                    key.reset();
                }
            }
        }
        throw new InterruptedException("the server was interrupted");
    }

    /** Starts a thread for each request not yet taken; forgets requests whose directories are gone. */
    private void scan() throws IOException {
        List<Path> requests = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(queue)) {
            entries.forEach(requests::add);
        }
        Set<String> present = new HashSet<>();
        for (Path request : requests) {
            String name = request.getFileName().toString();
            present.add(name);
            if (taken.add(name)) {
                Thread.ofPlatform().name("iomap-serve-" + name).start(() -> handle(request));
            } else {
                dropIfAbandoned(request);
            }
        }
        taken.retainAll(present);
    }

    /** Removes an answered request its client did not remove within {@link #ANSWERED_KEPT}. */
    private void dropIfAbandoned(Path request) {
        try {
            FileTime answered = Files.getLastModifiedTime(request.resolve(STATUS));
            if (answered.toInstant().isBefore(Instant.now().minus(ANSWERED_KEPT))) {
                deleteTree(request);
            }
        } catch (IOException e) {
            // not answered yet, or removed meanwhile
        }
    }

    /** Runs one request and answers it. */
    private void handle(Path request) {
        int number = served.incrementAndGet();
        long start = System.nanoTime();
        String[] args;
        Path cwd;
        try {
            args = readArgs(request.resolve(ARGS));
            cwd = Path.of(Files.readString(request.resolve(CWD), StandardCharsets.UTF_8).replaceFirst("\n$", ""));
        } catch (IOException | RuntimeException e) {
            log.println("iomap serve: request " + request.getFileName() + " cannot be read: " + e.getMessage());
            answerQuietly(request, "iomap serve: the request cannot be read: " + e.getMessage() + "\n", 2);
            return;
        }
        String command = Arrays.stream(args).filter(arg -> !arg.startsWith("-")).findFirst().orElse("");
        if (!SERVED.contains(command)) {
            answerQuietly(request, "iomap serve: the server runs " + String.join(", ", SERVED.stream().sorted().toList())
                    + "; run " + (command.isEmpty() ? "this" : command) + " without IOMAP_SERVER\n", 2);
            return;
        }
        Answer answer;
        try {
            answer = new Answer(request);
        } catch (IOException e) {
            log.println("iomap serve: request " + request.getFileName() + " cannot be answered: " + e.getMessage());
            return;
        }
        int status = ScopedValue.where(WorkingDirectory.CURRENT, cwd.isAbsolute() ? cwd : cwd.toAbsolutePath())
                .call(() -> IomapCli.run(args, answer.out, answer.err, factory(answer)));
        answer.finished(status);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        log.println("iomap serve: #" + number + " " + String.join(" ", args) + ": status " + status
                + (answer.mountedAfterMillis >= 0 ? ", mounted after " + answer.mountedAfterMillis + " ms, unmounted after "
                        + millis + " ms" : " after " + millis + " ms"));
        log.flush();
    }

    /** @return picocli's factory, with {@code mount} answering the client once mounted */
    private static CommandLine.IFactory factory(Answer answer) {
        CommandLine.IFactory defaults = CommandLine.defaultFactory();
        return new CommandLine.IFactory() {
            @Override
            public <K> K create(Class<K> type) throws Exception {
                if (type == MountCommand.class) {
                    return type.cast(new MountCommand(answer::mounted));
                }
                return defaults.create(type);
            }
        };
    }

    /** @return the NUL-ended arguments of an {@value #ARGS} file */
    static String[] readArgs(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        if (!text.isEmpty() && !text.endsWith("\0")) {
            throw new IOException(file + " does not end with a NUL byte (is it whole?)");
        }
        return text.isEmpty() ? new String[0] : text.substring(0, text.length() - 1).split("\0", -1);
    }

    /** Answers a request the server did not run: the message on its standard error, and a status. */
    private void answerQuietly(Path request, String error, int status) {
        try {
            Files.writeString(request.resolve(ERR), error, StandardCharsets.UTF_8);
            writeStatus(request, status);
        } catch (IOException e) {
            log.println("iomap serve: request " + request.getFileName() + " cannot be answered: " + e.getMessage());
        }
    }

    private static void writeStatus(Path request, int status) throws IOException {
        Path temp = request.resolve(STATUS + ".tmp");
        Files.writeString(temp, status + "\n", StandardCharsets.US_ASCII);
        Files.move(temp, request.resolve(STATUS), StandardCopyOption.ATOMIC_MOVE);
    }

    private static void deleteTree(Path path) throws IOException {
        if (!Files.exists(path)) {
            return;
        }
        try (var walk = Files.walk(path)) {
            for (Path each : walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                try {
                    Files.deleteIfExists(each);
                } catch (NoSuchFileException gone) {
                    // removed meanwhile (its client)
                }
            }
        }
    }

    /**
     * One request's output and answer: standard output and error go to its files until it is answered;
     * a mount's, after that, to the server's own (its messages while it is served).
     */
    private final class Answer {
        private final Path request;
        private final FileOutputStream outFile;
        private final FileOutputStream errFile;
        private final Redirect outTarget;
        private final Redirect errTarget;
        final PrintStream out;
        final PrintStream err;
        private final long start = System.nanoTime();
        private boolean answered;
        volatile long mountedAfterMillis = -1;

        Answer(Path request) throws IOException {
            this.request = request;
            this.outFile = new FileOutputStream(request.resolve(OUT).toFile());
            this.errFile = new FileOutputStream(request.resolve(ERR).toFile());
            this.outTarget = new Redirect(outFile);
            this.errTarget = new Redirect(errFile);
            this.out = new PrintStream(outTarget, true, StandardCharsets.UTF_8);
            this.err = new PrintStream(errTarget, true, StandardCharsets.UTF_8);
        }

        /** {@link MountCommand.Ready}: the client hears status 0 now, unless it asked to wait ({@code -f}). */
        void mounted(dev.iomap.fuse.IomapMount mount, boolean foreground) throws IOException {
            if (foreground) {
                return;
            }
            mountedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            answer(0);
        }

        /** The command ended: the client hears its status, unless it heard already (a mount). */
        void finished(int status) {
            try {
                answer(status);
            } catch (IOException e) {
                log.println("iomap serve: request " + request.getFileName() + " cannot be answered: " + e.getMessage());
            }
        }

        private synchronized void answer(int status) throws IOException {
            if (answered) {
                return;
            }
            answered = true;
            out.flush();
            err.flush();
            outTarget.moveTo(log);
            errTarget.moveTo(log);
            outFile.close();
            errFile.close();
            writeStatus(request, status);
        }
    }

    /** An output stream whose target can be changed while it is written to. */
    private static final class Redirect extends OutputStream {
        private OutputStream target;

        Redirect(OutputStream target) {
            this.target = target;
        }

        synchronized void moveTo(OutputStream next) throws IOException {
            target.flush();
            target = next;
        }

        @Override
        public synchronized void write(int b) throws IOException {
            target.write(b);
        }

        @Override
        public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
            target.write(bytes, offset, length);
        }

        @Override
        public synchronized void flush() throws IOException {
            target.flush();
        }
    }
}
