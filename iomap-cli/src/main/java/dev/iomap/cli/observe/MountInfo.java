package dev.iomap.cli.observe;

import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;

/**
 * What a running mount publishes in its runtime file ({@link MountRuntime}).
 *
 * @param pid the mount's process
 * @param mountPoint the mount point's real path
 * @param socket the Unix socket of its {@link ObservationServer}
 * @param metrics the address of its Prometheus endpoint ({@code 127.0.0.1:PORT}), if it serves one
 */
public record MountInfo(long pid, Path mountPoint, Path socket, Optional<String> metrics) {

    /** @return these values as properties */
    Properties toProperties() {
        Properties properties = new Properties();
        properties.setProperty("pid", Long.toString(pid));
        properties.setProperty("mountpoint", mountPoint.toString());
        properties.setProperty("socket", socket.toString());
        metrics.ifPresent(address -> properties.setProperty("metrics", address));
        return properties;
    }

    /**
     * @param properties what {@link #toProperties} wrote
     * @return the values
     * @throws IllegalArgumentException if a value is missing or does not parse
     */
    static MountInfo fromProperties(Properties properties) {
        String pid = properties.getProperty("pid");
        String mountPoint = properties.getProperty("mountpoint");
        String socket = properties.getProperty("socket");
        if (pid == null || mountPoint == null || socket == null) {
            throw new IllegalArgumentException("a mount runtime file without pid, mountpoint or socket: " + properties);
        }
        return new MountInfo(Long.parseLong(pid), Path.of(mountPoint), Path.of(socket),
                Optional.ofNullable(properties.getProperty("metrics")));
    }
}
