/**
 * A block device on an NBD export, with an NBD client of iomap4j's own (no kernel module):
 * {@link dev.iomap.devices.nbd.NbdBlockDevice}, opened on an {@link dev.iomap.devices.nbd.NbdExport}
 * ({@code nbd://HOST[:PORT]/EXPORT}, with {@link dev.iomap.devices.nbd.NbdOptions}). It keeps the device
 * contract of {@link dev.iomap.device.BlockDevice} across a dropped connection for a bounded time (see the
 * class comment); its own failures are {@link dev.iomap.devices.nbd.NbdNegotiationException} (the server
 * refused the export), {@link dev.iomap.devices.nbd.NbdTlsException} (TLS asked for, which it does not
 * speak) and {@link dev.iomap.devices.nbd.NbdConnectionLostException} (EIO once the connection could not
 * be made again). The protocol is the NetworkBlockDevice project's {@code doc/proto.md}.
 */
package dev.iomap.devices.nbd;
