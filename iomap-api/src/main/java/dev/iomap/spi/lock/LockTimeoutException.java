package dev.iomap.spi.lock;

import java.io.IOException;

/** A lock request was not granted within its timeout; nothing was granted. */
public final class LockTimeoutException extends IOException {
    private static final long serialVersionUID = 1L;

    /** @param message which lock, which mode, how long */
    public LockTimeoutException(String message) {
        super(message);
    }
}
