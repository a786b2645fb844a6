/**
 * A {@code java.nio.file} provider for iomap4j images (scheme {@code iomap}): see
 * {@link dev.iomap.nio.IomapFileSystemProvider}.
 */
package dev.iomap.nio;
