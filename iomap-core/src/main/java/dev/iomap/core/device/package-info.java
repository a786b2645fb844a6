/**
 * The block devices of the core: {@link dev.iomap.core.device.RamBlockDevice} (off-heap memory) and
 * {@link dev.iomap.core.device.FileBlockDevice} (a file, optionally with {@code O_DIRECT}), both
 * implementing {@link dev.iomap.api.BlockDevice} and counting what they do in a
 * {@link dev.iomap.core.device.DeviceCounters}.
 */
package dev.iomap.core.device;
