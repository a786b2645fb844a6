package dev.iomap.devices.nbd;

import dev.iomap.api.NotSupportedException;
import java.io.Serial;

/**
 * TLS was asked for and this client does not speak it: an {@code nbds://} address, or a server that
 * requires TLS ({@code NBD_REP_ERR_TLS_REQD}) before it names its exports. Nothing was read or
 * written. Serve the export without TLS on a trusted network, or tunnel the connection
 * (stunnel, {@code ssh -L}) and give the tunnel's {@code nbd://} address.
 */
public final class NbdTlsException extends NotSupportedException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message which address or server asked for TLS, and what to do */
    public NbdTlsException(String message) {
        super(message);
    }
}
