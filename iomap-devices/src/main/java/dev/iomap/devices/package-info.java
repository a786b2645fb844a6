/**
 * Block devices for iomap4j, depending on the API only:
 * <ul>
 *   <li>{@link dev.iomap.devices.RamBlockDevice} (off-heap memory) and
 *       {@link dev.iomap.devices.FileBlockDevice} (a file, optionally with {@code O_DIRECT}), both
 *       counting what they do in a {@link dev.iomap.devices.DeviceCounters};</li>
 *   <li>{@link dev.iomap.devices.ZonedDevice}, zoned storage emulated over any of them;</li>
 *   <li>devices for tests: {@link dev.iomap.devices.PowerCutDevice} (forgets what was not flushed),
 *       {@link dev.iomap.devices.FaultInjectingDevice} (I/O errors, torn writes),
 *       {@link dev.iomap.devices.CountingDevice} and the base of such wrappers,
 *       {@link dev.iomap.devices.ForwardingBlockDevice}.</li>
 * </ul>
 */
package dev.iomap.devices;
