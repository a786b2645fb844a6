/**
 * Seeing inside a running mount: the runtime file that names a mount's process and socket
 * ({@link dev.iomap.cli.observe.MountRuntime}), the Unix socket server in the mount's process that
 * streams its trace events and counters ({@link dev.iomap.cli.observe.ObservationServer}), its counters
 * over JMX and in Prometheus' text format ({@link dev.iomap.cli.observe.MountMetrics}), and the client
 * side of {@code iomap trace} and {@code iomap top}.
 */
package dev.iomap.cli.observe;
