/**
 * snapfs, the test kit's example of a complete small adapter ({@link dev.iomap.testkit.snapfs.SnapAdapter}),
 * written against the SPI only: read it to see what an adapter has to do, use it wherever a test needs
 * a real, durable filesystem without the xfs-like adapter's size. It passes the whole contract kit.
 * Register it by name with {@link dev.iomap.testkit.snapfs.SnapPlugin} in a test-scope service file.
 */
package dev.iomap.testkit.snapfs;
