package dev.iomap.api;

import java.io.Serial;

/** The device or filesystem has no room for the data (the kernel's ENOSPC). Nothing was half-done. */
public class NoSpaceException extends IomapException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message what needed space and how much was left */
    public NoSpaceException(String message) {
        super(message);
    }
}
