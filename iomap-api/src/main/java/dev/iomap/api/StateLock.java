package dev.iomap.api;

/**
 * How the buffered write path takes a folio state's lock after copying data in (the experiment of
 * the 2024 "bs &lt; folio size" series).
 */
public enum StateLock {
    /** One lock cycle to mark the blocks uptodate and another to mark them dirty (before the series). */
    SEPARATE,
    /** Uptodate and dirty bits set under one lock acquisition (after the series). */
    COMBINED
}
