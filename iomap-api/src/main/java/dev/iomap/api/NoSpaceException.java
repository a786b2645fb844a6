package dev.iomap.api;

/** The device or filesystem has no room for the data (the kernel's ENOSPC). Nothing was half-done. */
public class NoSpaceException extends IomapException {

    /** @param message what needed space and how much was left */
    public NoSpaceException(String message) {
        super(message);
    }
}
