package dev.iomap.cli.observe;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The client end of an {@link ObservationServer}: one connection, one request. Closing it tells the server
 * to stop streaming.
 */
public final class ObservationClient implements AutoCloseable {
    private final SocketChannel channel;
    private final BufferedReader in;
    private final MountInfo mount;

    private ObservationClient(SocketChannel channel, MountInfo mount) {
        this.channel = channel;
        this.mount = mount;
        this.in = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel), StandardCharsets.UTF_8));
    }

    /**
     * Connects to the mount at {@code mountPoint} through the runtime directory.
     *
     * @param runtime the runtime directory of this user
     * @param mountPoint the mount point
     * @return the connection
     * @throws IOException if no mount of this user runs there, or its socket refuses
     */
    public static ObservationClient connect(MountRuntime runtime, Path mountPoint) throws IOException {
        MountInfo info = runtime.find(mountPoint);
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            channel.connect(UnixDomainSocketAddress.of(info.socket()));
        } catch (IOException e) {
            channel.close();
            throw new IOException("cannot reach the iomap mount at " + info.mountPoint() + " (pid " + info.pid()
                    + ") through " + info.socket() + ": " + e.getMessage(), e);
        }
        return new ObservationClient(channel, info);
    }

    /** @return what the mount published */
    public MountInfo mount() {
        return mount;
    }

    /**
     * Asks for a trace stream.
     *
     * @param globs the events, as {@code iomap trace --events} takes them; null or blank for all
     * @param inode only events about this inode, or -1 for all
     * @throws IOException if the request cannot be sent
     */
    public void requestTrace(String globs, long inode) throws IOException {
        send("trace\t" + (globs == null || globs.isBlank() ? "*" : globs.strip()) + "\t"
                + (inode < 0 ? "-" : Long.toString(inode)));
    }

    /**
     * Asks for the samples once a second.
     *
     * @throws IOException if the request cannot be sent
     */
    public void requestTop() throws IOException {
        send("top");
    }

    private void send(String line) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
    }

    /**
     * @return the next line from the mount, or null when it ended the stream (the mount is gone)
     * @throws ServerException if the mount answered with an error
     * @throws IOException if the connection fails
     */
    public String readLine() throws IOException {
        String line = in.readLine();
        if (line != null && line.startsWith("error: ")) {
            throw new ServerException(line.substring("error: ".length()));
        }
        return line;
    }

    /**
     * @return the next snapshot of a {@code top} stream by sample key, or null when the stream ended
     * @throws IOException if the connection fails or the mount answered with an error
     */
    public Map<String, Double> readSamples() throws IOException {
        Map<String, Double> samples = new LinkedHashMap<>();
        String line;
        while ((line = readLine()) != null && !line.isEmpty()) {
            int space = line.lastIndexOf(' ');
            samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
        }
        return line == null && samples.isEmpty() ? null : samples;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    /** The mount refused or could not serve a request; the message says why. */
    public static final class ServerException extends IOException {
        private static final long serialVersionUID = 1L;

        ServerException(String message) {
            super(message);
        }
    }
}
