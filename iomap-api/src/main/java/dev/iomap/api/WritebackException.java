package dev.iomap.api;

import java.io.Serial;

/**
 * Data written earlier through this open file could not be written back: raised by fsync, once per
 * open file for each error (the kernel's errseq semantics). The cause is the first error recorded.
 */
public class WritebackException extends IomapException {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * @param message which file and what was lost
     * @param cause the recorded device or adapter error
     */
    public WritebackException(String message, Throwable cause) {
        super(message, cause);
    }
}
