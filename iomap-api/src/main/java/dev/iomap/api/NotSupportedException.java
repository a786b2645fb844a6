package dev.iomap.api;

import java.io.Serial;

/**
 * The adapter or device does not do this operation (the kernel's EOPNOTSUPP): a declared-absent
 * capability, never a half-implemented one.
 */
public class NotSupportedException extends IomapException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message which operation, and on what */
    public NotSupportedException(String message) {
        super(message);
    }
}
