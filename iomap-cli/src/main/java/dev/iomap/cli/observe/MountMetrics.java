package dev.iomap.cli.observe;

import dev.iomap.api.IomapFileSystem;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * A mount's {@link MountSamples} over JMX (always) and, when asked, over HTTP in Prometheus' text format
 * ({@code GET /metrics}), served by the Prometheus Java client's {@link HTTPServer} on a loopback address.
 * Each scrape and each JMX read takes one fresh snapshot. Closing unregisters the bean and stops the server.
 */
public final class MountMetrics implements AutoCloseable {
    private final ObjectName name;
    private final HTTPServer http;

    private MountMetrics(ObjectName name, HTTPServer http) {
        this.name = name;
        this.http = http;
    }

    /**
     * Registers the mount's bean and, with an address, starts its Prometheus endpoint.
     *
     * @param fs the mounted file system
     * @param mountPoint its mount point (names the bean)
     * @param address {@code HOST:PORT} to serve {@code /metrics} on, a loopback host; null for none
     * @return the running metrics
     * @throws IOException if the address is taken or not a loopback address, or the bean cannot be registered
     */
    public static MountMetrics start(IomapFileSystem fs, Path mountPoint, String address) throws IOException {
        ObjectName name = register(fs, mountPoint);
        if (address == null) {
            return new MountMetrics(name, null);
        }
        try {
            return new MountMetrics(name, serve(fs, address));
        } catch (IOException | RuntimeException e) {
            unregister(name);
            throw e;
        }
    }

    /** @return the port the Prometheus endpoint listens on, or -1 without one */
    public int port() {
        return http == null ? -1 : http.getPort();
    }

    private static HTTPServer serve(IomapFileSystem fs, String address) throws IOException {
        int colon = address.lastIndexOf(':');
        if (colon < 0) {
            throw new IOException("--metrics takes HOST:PORT, e.g. 127.0.0.1:9464; got " + address);
        }
        InetAddress host = InetAddress.getByName(address.substring(0, colon));
        if (!host.isLoopbackAddress()) {
            throw new IOException("--metrics serves on a loopback address only (127.0.0.1 or ::1), not " + host
                    + ": the counters say what files are busy, and a proxy can publish them further");
        }
        int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IOException("--metrics: bad port in " + address, e);
        }
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register((MultiCollector) () -> snapshots(MountSamples.of(fs)));
        return HTTPServer.builder().inetAddress(host).port(port).registry(registry).buildAndStart();
    }

    /** @return the samples as Prometheus snapshots: one family per name, one data point per label set */
    static MetricSnapshots snapshots(List<MountSample> samples) {
        Map<String, List<MountSample>> families = new LinkedHashMap<>();
        for (MountSample sample : samples) {
            families.computeIfAbsent(sample.name(), n -> new java.util.ArrayList<>()).add(sample);
        }
        MetricSnapshots.Builder all = MetricSnapshots.builder();
        families.forEach((family, members) -> all.metricSnapshot(snapshot(family, members)));
        return all.build();
    }

    private static MetricSnapshot snapshot(String family, List<MountSample> members) {
        MountSample first = members.get(0);
        if (first.counter()) {
            // the client adds _total itself
            CounterSnapshot.Builder counter = CounterSnapshot.builder()
                    .name(family.substring(0, family.length() - "_total".length())).help(first.help());
            for (MountSample sample : members) {
                counter.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(sample.value())
                        .labels(labels(sample)).build());
            }
            return counter.build();
        }
        GaugeSnapshot.Builder gauge = GaugeSnapshot.builder().name(family).help(first.help());
        for (MountSample sample : members) {
            gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(sample.value())
                    .labels(labels(sample)).build());
        }
        return gauge.build();
    }

    private static Labels labels(MountSample sample) {
        Labels.Builder labels = Labels.builder();
        sample.labels().forEach(labels::label);
        return labels.build();
    }

    /**
     * Registers the bean as {@code dev.iomap:type=Mount,name="MOUNTPOINT"}; where a mount at the same mount
     * point in this process is still closing (the mount server, after {@code umount} then {@code mount}),
     * as {@code ...,generation=N} with the first N from 2 that is free, so that neither mount's bean is
     * taken by the other.
     */
    private static ObjectName register(IomapFileSystem fs, Path mountPoint) throws IOException {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        String base = "dev.iomap:type=Mount,name=" + ObjectName.quote(mountPoint.toString());
        try {
            for (int generation = 1; ; generation++) {
                ObjectName name = new ObjectName(generation == 1 ? base : base + ",generation=" + generation);
                try {
                    server.registerMBean(new Bean(fs, mountPoint), name);
                    return name;
                } catch (InstanceAlreadyExistsException taken) {
                    // the previous mount here is still closing: the next generation
                }
            }
        } catch (JMException e) {
            throw new IOException("cannot register the mount's JMX bean for " + mountPoint + ": " + e.getMessage(), e);
        }
    }

    private static void unregister(ObjectName name) {
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
        } catch (JMException e) {
            // already gone: nothing left to undo
        }
    }

    /** Unregisters the bean and stops the endpoint. */
    @Override
    public void close() {
        if (http != null) {
            http.close();
        }
        unregister(name);
    }

    /** The bean: every getter takes a fresh snapshot. */
    private record Bean(IomapFileSystem fs, Path mountPoint) implements MountMXBean {
        @Override
        public String getMountPoint() {
            return mountPoint.toString();
        }

        @Override
        public Map<String, Double> getSamples() {
            Map<String, Double> samples = new LinkedHashMap<>();
            MountSamples.of(fs).forEach(sample -> samples.put(sample.key(), sample.value()));
            return samples;
        }

        @Override
        public long getAppWrittenBytes() {
            return fs.stats().appBytesWritten();
        }

        @Override
        public long getDeviceWrittenBytes() {
            return fs.stats().device().bytesWritten();
        }

        @Override
        public double getWriteAmplification() {
            return fs.stats().writeAmplification();
        }

        @Override
        public long getDirtyBytes() {
            return fs.cacheStatus().dirtyBytes();
        }

        @Override
        public long getWritebackBytes() {
            return fs.cacheStatus().writebackBytes();
        }

        @Override
        public long getCachedBytes() {
            return fs.cacheStatus().cachedBytes();
        }
    }
}
