package dev.iomap.spi.lock;

import java.io.IOException;

/**
 * A holder's {@link DemoteCallbacks} threw, so its lock kept its mode (no data it had was dropped
 * unwritten) and the request or release that needed the transition did not happen.
 */
public final class DemoteFailedException extends IOException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message which lock and which transition
     * @param cause what the callback threw
     */
    public DemoteFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
