/**
 * Direct I/O: the kernel's {@code iomap_dio_rw} ({@code fs/iomap/direct-io.c}). {@link
 * dev.iomap.core.dio.DirectIo} reads and writes block-aligned ranges straight between the caller's
 * buffer and the device through the adapter's {@code begin} with {@code IomapRequest.DIRECT}, keeping
 * the page cache coherent around them.
 */
package dev.iomap.core.dio;
