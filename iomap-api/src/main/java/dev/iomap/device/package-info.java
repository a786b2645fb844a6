/**
 * Block devices as the core and the adapters see them: {@link dev.iomap.device.BlockDevice} (positional,
 * asynchronous writes, flush, counters), {@link dev.iomap.device.ZonedBlockDevice} and its zones, and
 * the device errors. Depends on nothing else in iomap4j; the implementations (RAM, file, zoned
 * emulation, and the power-cut, fault-injecting and counting test devices) are in module
 * {@code iomap-devices}, package {@code dev.iomap.devices}.
 */
package dev.iomap.device;
