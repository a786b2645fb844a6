package dev.iomap.devices.nbd;

import dev.iomap.api.IomapException;
import java.io.Serial;

/**
 * The server and this client could not agree on an export during the NBD handshake: the server
 * does not know the export, refuses it, is shutting down, speaks a negotiation this client does not
 * (oldstyle, or newstyle without the fixed extension), or broke the protocol. The message names the
 * server, the export and the server's own reason where it gave one. Nothing was read or written.
 */
public class NbdNegotiationException extends IomapException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message what the server answered, and what to do */
    public NbdNegotiationException(String message) {
        super(message);
    }

    /**
     * @param message what went wrong
     * @param cause the underlying error
     */
    public NbdNegotiationException(String message, Throwable cause) {
        super(message, cause);
    }
}
