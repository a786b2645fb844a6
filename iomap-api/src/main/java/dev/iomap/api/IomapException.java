package dev.iomap.api;

import java.io.IOException;
import java.io.Serial;

/** The base of every checked error iomap4j raises: something the caller can act on. */
public class IomapException extends IOException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message what went wrong and, where it helps, what to do */
    public IomapException(String message) {
        super(message);
    }

    /**
     * @param message what went wrong
     * @param cause the underlying error
     */
    public IomapException(String message, Throwable cause) {
        super(message, cause);
    }
}
