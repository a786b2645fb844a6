package dev.iomap.devices;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports on 127.0.0.1 for servers that tests start, stop and start again on the same port (a ZooKeeper
 * or NBD server restarted, a cluster node's connect string kept across a restart).
 *
 * <p>A port the kernel picked for a listener ({@code bind} to port 0) lies in its ephemeral range
 * ({@code /proc/sys/net/ipv4/ip_local_port_range}), which is also where every outgoing connection on
 * the machine gets its local port. While a test's server is down, any client anywhere (a reconnect
 * loop of the test itself, another build's ZooKeeper client) can be given that port, and the
 * restart's {@code bind} fails with "Address already in use". The ports handed out here lie below the
 * ephemeral range, which the kernel never assigns to a connection, so only another listener can hold
 * one; {@link #reserve} checks that none does when it picks it.
 *
 * <p>Thread-safe (stateless).
 */
public final class LoopbackPorts {
    /** The lowest port handed out: above the well-known and most registered services' ports. */
    static final int LOWEST = 20_000;
    private static final int FALLBACK_EPHEMERAL_LOW = 32_768;
    private static final int ATTEMPTS = 200;

    private LoopbackPorts() {
    }

    /**
     * A port on 127.0.0.1 that no listener holds now and that the kernel never gives to an outgoing
     * connection, so a server stopped on it can bind it again.
     *
     * @return a free port below the kernel's ephemeral range
     * @throws IOException if no free port was found in {@value #ATTEMPTS} random tries
     */
    public static int reserve() throws IOException {
        int below = ephemeralLow();
        if (below <= LOWEST) {
            throw new IOException("the ephemeral port range starts at " + below + ", at or below " + LOWEST
                    + ": no port is safe from outgoing connections");
        }
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOWEST, below);
            if (free(port)) {
                return port;
            }
        }
        throw new IOException("no free port on 127.0.0.1 in [" + LOWEST + ", " + below + ") after " + ATTEMPTS
                + " tries");
    }

    /** @return the first port of the kernel's ephemeral range (32768 if it cannot be read) */
    static int ephemeralLow() {
        // One line read, not Files.readString: a /proc file's size is 0, and readString then returned one byte.
        try (var in = Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
            return Integer.parseInt(in.readLine().strip().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return FALLBACK_EPHEMERAL_LOW;
        }
    }

    private static boolean free(int port) {
        try (var socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException taken) {
            return false;
        }
    }
}
