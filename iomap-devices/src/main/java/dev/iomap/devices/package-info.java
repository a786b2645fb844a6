/**
 * Block devices for iomap4j, depending on the API only. There is one device of each kind:
 * <ul>
 *   <li>{@link dev.iomap.devices.RamBlockDevice}: off-heap memory in sparse 64 KiB chunks; also the
 *       tests' image, with {@link dev.iomap.devices.RamBlockDevice#copy()},
 *       {@link dev.iomap.devices.RamBlockDevice#peek} and {@link dev.iomap.devices.RamBlockDevice#poke},
 *       which keep working after close;</li>
 *   <li>{@link dev.iomap.devices.FileBlockDevice}: a file, optionally with {@code O_DIRECT}, held
 *       under an open file description lock: exclusively when opened for writing, shared when
 *       opened read-only ({@link dev.iomap.devices.FileBlockDevice#openReadOnly});</li>
 *   <li>{@link dev.iomap.devices.OverlayDevice}: keeps every write in memory over a device it never
 *       writes, to mount a read-only image without changing it;</li>
 *   <li>{@link dev.iomap.devices.ZonedDevice}: zoned storage emulated over any device, in a
 *       {@link dev.iomap.devices.ZoneLayout};</li>
 *   <li>{@link dev.iomap.devices.nbd.NbdBlockDevice}: an export of an NBD server
 *       ({@code nbd://HOST:PORT/EXPORT}), shared with whoever else the server lets connect;</li>
 *   <li>for tests: {@link dev.iomap.devices.PowerCutDevice} (remembers what was not flushed and loses
 *       it as a {@link dev.iomap.devices.CutMode} says, at an exact write or flush),
 *       {@link dev.iomap.devices.FaultInjectingDevice} (I/O errors and torn writes by
 *       {@link dev.iomap.devices.Fault} rules), {@link dev.iomap.devices.CountingDevice} (counts and
 *       records requests), and the base of such wrappers (in the API),
 *       {@link dev.iomap.device.ForwardingBlockDevice}.</li>
 * </ul>
 *
 * <p>Every device is thread-safe, counts what it does in a {@link dev.iomap.devices.DeviceCounters},
 * refuses writes with {@link dev.iomap.device.ReadOnlyDeviceException} if it is
 * {@link dev.iomap.device.BlockDevice#readOnly() read-only} (a read-only file, or a device over one),
 * rejects a request that is not whole blocks inside it with
 * {@link dev.iomap.device.DeviceRangeException} (a write: as its future's exception), and after
 * {@code close()} fails every read, write, flush and discard with {@link java.io.IOException} while
 * its geometry and statistics still answer. Each class says what it adds to that.
 */
package dev.iomap.devices;
