package dev.iomap.cli.observe;

import dev.iomap.api.IomapFileSystem;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import jdk.jfr.consumer.RecordingStream;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * The mount process's end of {@code iomap trace} and {@code iomap top}: a Unix domain socket in the
 * user's runtime directory ({@link MountRuntime}) that answers one request per connection.
 *
 * <ul>
 * <li>{@code trace GLOBS INODE}: starts a JFR {@link RecordingStream} in this process with the trace events
 * the globs select ({@link TraceEvents}), and writes each event as one {@link TraceLine} (only those about
 * inode {@code INODE}, unless it is {@code -}) until the client closes the connection or the mount ends.
 * The stream flushes every second, so an event reaches the client within about a second.</li>
 * <li>{@code top}: writes the mount's {@link MountSamples} once a second, one {@code KEY VALUE} line each
 * and an empty line after each snapshot, until the client closes the connection or the mount ends.</li>
 * </ul>
 *
 * <p>Only the mount's user may connect: the socket lies in a directory only that user may enter, its own
 * mode is 0600, and each connection's peer credentials ({@code SO_PEERCRED}) must name the same user, or it
 * is closed after one line saying why. A line the server cannot serve is answered {@code error: WHY}.
 * Closing the server stops every stream it serves.
 */
public final class ObservationServer implements AutoCloseable {
    private final IomapFileSystem fs;
    private final Path socket;
    private final ServerSocketChannel server;
    private final String owner;
    private final Instant started = Instant.now();
    private final Duration interval;
    /** One latch per connection served, counted down when the client goes or the server closes. */
    private final Set<CountDownLatch> sessions = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private final Thread acceptor;

    private ObservationServer(IomapFileSystem fs, Path socket, Duration interval) throws IOException {
        this.fs = fs;
        this.socket = socket;
        this.interval = interval;
        this.owner = MountRuntime.currentUser();
        Files.deleteIfExists(socket);
        this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        this.acceptor = Thread.ofPlatform().daemon().name("iomap-observe").start(this::acceptLoop);
    }

    /**
     * Serves {@code fs} on a socket at {@code socket}, replacing a stale socket file there.
     *
     * @param fs the mounted file system
     * @param socket where to bind (in a {@link MountRuntime} directory)
     * @return the running server
     * @throws IOException if the socket cannot be bound
     */
    public static ObservationServer start(IomapFileSystem fs, Path socket) throws IOException {
        return new ObservationServer(fs, socket, Duration.ofSeconds(1));
    }

    /** @return the socket's path */
    public Path socket() {
        return socket;
    }

    private void acceptLoop() {
        while (server.isOpen()) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                System.getLogger(ObservationServer.class.getName()).log(System.Logger.Level.WARNING,
                        "iomap observe: accept failed: " + e.getMessage());
                return;
            }
            Thread.ofVirtual().name("iomap-observe-client").start(() -> serve(client));
        }
    }

    private void serve(SocketChannel client) {
        CountDownLatch done = new CountDownLatch(1);
        sessions.add(done);
        if (closed) {
            done.countDown();
        }
        try (client; PrintStream out = new PrintStream(Channels.newOutputStream(client), false, StandardCharsets.UTF_8)) {
            String peer = peerUser(client);
            if (!owner.equals(peer)) {
                out.println("error: refused: the mount belongs to " + owner + ", and " + peer + " may not attach");
                out.flush();
                return;
            }
            BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(client),
                    StandardCharsets.UTF_8));
            String request = in.readLine();
            if (request == null) {
                return;
            }
            List<String> words = List.of(request.strip().split("\t"));
            switch (words.get(0)) {
                case "trace" -> trace(words, in, out, done);
                case "top" -> top(in, out, done);
                default -> {
                    out.println("error: unknown request '" + words.get(0) + "' (trace or top)");
                    out.flush();
                }
            }
        } catch (IOException e) {
            // the client went away: nothing to tell anyone
        } finally {
            sessions.remove(done);
        }
    }

    private static String peerUser(SocketChannel client) throws IOException {
        UnixDomainPrincipal principal = client.getOption(ExtendedSocketOptions.SO_PEERCRED);
        return principal.user().getName();
    }

    /** Streams trace lines until the client closes its end or the server closes. */
    private void trace(List<String> words, BufferedReader in, PrintStream out, CountDownLatch done) {
        String globs = words.size() > 1 ? words.get(1) : "";
        long inode = words.size() > 2 && !words.get(2).equals("-") ? Long.parseLong(words.get(2)) : -1;
        List<String> names;
        try {
            names = TraceEvents.select(globs);
        } catch (IllegalArgumentException e) {
            out.println("error: " + e.getMessage());
            out.flush();
            return;
        }
        try (RecordingStream stream = new RecordingStream()) {
            names.forEach(stream::enable);
            stream.onEvent(event -> {
                if (inode < 0 || TraceLine.isAbout(event, inode)) {
                    out.println(TraceLine.format(event, started));
                }
            });
            stream.onFlush(() -> {
                out.flush();
                if (out.checkError()) {
                    done.countDown(); // the client is gone: trace() returns and closes the stream
                }
            });
            stream.startAsync();
            out.println("# tracing " + String.join(",", names.stream().map(TraceEvents::displayName).toList())
                    + (inode >= 0 ? " of inode " + inode : ""));
            out.flush();
            watchClient(in, done);
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Counts {@code done} down when the client closes its end (its input reaches end-of-stream). */
    private static void watchClient(BufferedReader in, CountDownLatch done) {
        Thread.ofVirtual().name("iomap-observe-watch").start(() -> {
            try {
                while (in.readLine() != null) {
                    // a client sends nothing more; reading only tells when it is gone
                }
            } catch (IOException e) {
                // gone as well
            }
            done.countDown();
        });
    }

    /** Writes a snapshot of the samples every interval until the client is gone or the server closes. */
    private void top(BufferedReader in, PrintStream out, CountDownLatch done) {
        watchClient(in, done);
        try {
            do {
                for (MountSample sample : MountSamples.of(fs)) {
                    out.println(sample.key() + " " + sample.value());
                }
                out.println();
                out.flush();
            } while (!out.checkError() && !done.await(interval.toMillis(), TimeUnit.MILLISECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops accepting, ends every stream, removes the socket file. */
    @Override
    public void close() throws IOException {
        closed = true;
        sessions.forEach(CountDownLatch::countDown);
        server.close();
        try {
            acceptor.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(socket);
    }
}
