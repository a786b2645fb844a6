/**
 * Runnable examples of the engine, in the test sources (not shipped in iomap-core's jar).
 * {@link dev.iomap.core.example.QuickStart} writes scattered 4 KiB blocks through the page cache of a
 * RAM device with no filesystem, reads them back through a cold cache and prints the write
 * amplification with and without per-block dirty tracking ({@code mvn -q -pl iomap-core exec:java}).
 */
package dev.iomap.core.example;
