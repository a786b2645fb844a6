package dev.iomap.cli.observe;

import dev.iomap.api.IomapFileSystem;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Everything that lets others see inside one running mount, started together and stopped together: its
 * metrics ({@link MountMetrics}: JMX, and Prometheus with {@code --metrics}), its {@link ObservationServer}
 * socket, and the runtime file that tells {@code iomap trace} and {@code iomap top} where that socket is.
 */
public final class MountObservation implements AutoCloseable {
    private final MountRuntime runtime;
    private final Path mountPoint;
    private final MountMetrics metrics;
    private final ObservationServer server;

    private MountObservation(MountRuntime runtime, Path mountPoint, MountMetrics metrics, ObservationServer server) {
        this.runtime = runtime;
        this.mountPoint = mountPoint;
        this.metrics = metrics;
        this.server = server;
    }

    /**
     * Starts observing a mount.
     *
     * @param fs the mounted file system
     * @param mountPoint where it is (or is about to be) mounted; an existing directory
     * @param metricsAddress {@code 127.0.0.1:PORT} for a Prometheus endpoint, or null
     * @param runtime the runtime directory to publish in
     * @return the running observation
     * @throws IOException if the socket, the endpoint or the runtime file cannot be made
     */
    public static MountObservation start(IomapFileSystem fs, Path mountPoint, String metricsAddress,
            MountRuntime runtime) throws IOException {
        Path real = mountPoint.toRealPath();
        MountMetrics metrics = MountMetrics.start(fs, real, metricsAddress);
        ObservationServer server = null;
        try {
            server = ObservationServer.start(fs, runtime.newSocket(real));
            Optional<String> address = metrics.port() < 0 ? Optional.empty()
                    : Optional.of(metricsAddress.substring(0, metricsAddress.lastIndexOf(':') + 1) + metrics.port());
            runtime.publish(new MountInfo(ProcessHandle.current().pid(), real, server.socket(), address));
            return new MountObservation(runtime, real, metrics, server);
        } catch (IOException | RuntimeException e) {
            metrics.close();
            if (server != null) {
                server.close();
            }
            throw e;
        }
    }

    /** @return the port of the Prometheus endpoint, -1 without one */
    public int metricsPort() {
        return metrics.port();
    }

    /** Withdraws the runtime file, stops the socket and the metrics. */
    @Override
    public void close() throws IOException {
        try {
            runtime.withdraw(mountPoint, server.socket());
        } finally {
            try {
                server.close();
            } finally {
                metrics.close();
            }
        }
    }
}
