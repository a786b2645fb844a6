package dev.iomap.cli;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * How {@code iomap mount} leaves its caller once the mount is up, as every FUSE file system does unless
 * told {@code -f}. A JVM cannot fork, so {@code bin/iomap} starts it detached already (in a session of its
 * own, {@code setsid}, standard input {@code /dev/null}) with a pipe on the descriptor named by
 * {@value #READY_FD_VARIABLE}, and waits on that pipe: until the mount is up, errors go to the caller's
 * standard error as usual and, if the mount fails, the JVM exits with its status and the pipe ends empty.
 * Once mounted, {@link #detach} points standard output and error (Java's and native code's, libfuse
 * included) at the log, writes {@value #READY} to the pipe and closes it: {@code bin/iomap} then exits 0.
 *
 * <p>The log: {@code --log FILE} (appended to), {@code --log syslog} (each line through {@code logger(1)},
 * tag {@code iomap}), or by default {@link #defaultLog}.
 */
final class Detach {

    /** The environment variable naming the descriptor of the launcher's pipe. */
    static final String READY_FD_VARIABLE = "IOMAP_READY_FD";

    /** What the pipe gets once the mount is up. */
    static final String READY = "mounted";

    /** {@code --log}'s value for syslog. */
    static final String SYSLOG = "syslog";

    private Detach() {
    }

    /** @return the launcher's pipe, if this mount is to detach; -1 otherwise (run in the foreground) */
    static int readyDescriptor() {
        String fd = System.getenv(READY_FD_VARIABLE);
        if (fd == null || fd.isBlank()) {
            return -1;
        }
        try {
            return Integer.parseInt(fd.strip());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * The default log of a detached mount: {@code /var/log/iomap/MOUNTPOINT.log} for root,
     * {@code $XDG_STATE_HOME/iomap/MOUNTPOINT.log} (or {@code ~/.local/state/iomap/...}) for other users,
     * MOUNTPOINT being the mount point's path with {@code /} as {@code -} ({@code mnt-data.log}).
     *
     * @param mountPoint the mount point
     * @param root whether the user is root
     * @param stateHome {@code $XDG_STATE_HOME}, or null
     * @param home the home directory
     * @return the log file
     */
    static Path defaultLog(Path mountPoint, boolean root, String stateHome, String home) {
        String name = mountPoint.toAbsolutePath().normalize().toString().replaceAll("^/+", "").replace('/', '-');
        if (name.isEmpty()) {
            name = "root";
        }
        Path dir = root ? Path.of("/var/log/iomap")
                : stateHome != null && !stateHome.isBlank() ? Path.of(stateHome, "iomap")
                : Path.of(home, ".local", "state", "iomap");
        return dir.resolve(name + ".log");
    }

    /**
     * Sends standard output and error to the log and tells the launcher the mount is up.
     *
     * @param readyFd the launcher's pipe
     * @param log the log file, or {@value #SYSLOG}
     * @throws IOException if the log cannot be opened or the descriptors cannot be moved (the mount is then
     *     up, and the caller unmounts it)
     */
    static void detach(int readyFd, String log) throws IOException {
        System.out.flush();
        System.err.flush();
        if (SYSLOG.equals(log)) {
            toSyslog();
        } else {
            toFile(Path.of(log));
        }
        Files.writeString(Path.of("/proc/self/fd/" + readyFd), READY + "\n", StandardCharsets.US_ASCII,
                StandardOpenOption.WRITE);
        close(readyFd);
    }

    /**
     * Closes the launcher's pipe without a word: {@code bin/iomap} then waits for this process to end and
     * exits with its status, as in the foreground (for {@code -o foreground}, which the launcher does not
     * look for).
     *
     * @param readyFd the launcher's pipe
     * @throws IOException if it cannot be closed
     */
    static void stayInForeground(int readyFd) throws IOException {
        close(readyFd);
    }

    private static void toFile(Path log) throws IOException {
        Path parent = log.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(log, "", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        int fd = open(log);
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }

    /** A pipe into {@code logger -t iomap}, on standard output and error. */
    private static void toSyslog() throws IOException {
        int[] pipe = pipe();
        new ProcessBuilder("logger", "-t", "iomap")
                .redirectInput(Path.of("/proc/self/fd/" + pipe[0]).toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        close(pipe[0]);
        dup2(pipe[1], 1);
        dup2(pipe[1], 2);
        close(pipe[1]);
    }

    private static final Linker LINKER = Linker.nativeLinker();

    @SuppressWarnings("restricted") // libc's descriptor calls: what detaching is
    private static MethodHandle libc(String name, FunctionDescriptor signature) {
        MemorySegment symbol = LINKER.defaultLookup().find(name)
                .orElseThrow(() -> new IllegalStateException("libc has no " + name));
        return LINKER.downcallHandle(symbol, signature);
    }

    private static int open(Path file) throws IOException {
        int oWronlyAppend = 01 | 02000;
        try (Arena arena = Arena.ofConfined()) {
            int fd = (int) libc("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT))
                    .invokeExact(arena.allocateFrom(file.toString()), oWronlyAppend);
            return checked(fd, "open " + file);
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("open " + file + " failed", t);
        }
    }

    private static int[] pipe() throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fds = arena.allocate(JAVA_INT, 2);
            int result = (int) libc("pipe", FunctionDescriptor.of(JAVA_INT, ADDRESS)).invokeExact(fds);
            checked(result, "pipe");
            return new int[] {fds.getAtIndex(JAVA_INT, 0), fds.getAtIndex(JAVA_INT, 1)};
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("pipe failed", t);
        }
    }

    private static void dup2(int from, int to) throws IOException {
        try {
            int result = (int) libc("dup2", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT)).invokeExact(from, to);
            checked(result, "dup2");
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("dup2 failed", t);
        }
    }

    private static void close(int fd) throws IOException {
        try {
            int result = (int) libc("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT)).invokeExact(fd);
            checked(result, "close");
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("close failed", t);
        }
    }

    private static int checked(int result, String what) throws IOException {
        if (result < 0) {
            throw new IOException(what + " failed");
        }
        return result;
    }
}
