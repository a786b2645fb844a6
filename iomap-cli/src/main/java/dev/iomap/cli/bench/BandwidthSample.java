package dev.iomap.cli.bench;

/**
 * How much a group's threads had read and written at one moment of its run (fio's bandwidth log, as
 * running totals; the chart takes differences).
 *
 * @param nanos time since the group started
 * @param readBytes bytes read so far, ramp time included
 * @param writtenBytes bytes written so far, ramp time included
 */
public record BandwidthSample(long nanos, long readBytes, long writtenBytes) {
}
