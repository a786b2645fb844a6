package dev.iomap.devices.nbd;

import dev.iomap.device.DeviceIoException;
import java.io.Serial;

/**
 * The connection to the NBD server dropped and could not be made again within the device's
 * reconnect window ({@link NbdOptions#reconnectWindow}): the request did not complete (a write may
 * or may not have reached the server, a flush made nothing durable). The kernel's EIO. The device
 * fails every later request the same way; mount it again once the server is back.
 */
public final class NbdConnectionLostException extends DeviceIoException {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * @param message which server, since when, and why the last attempt failed
     * @param offset device byte offset of the request's range (0 for a flush)
     * @param length bytes in it (the device's capacity for a flush)
     * @param cause the last connection error
     */
    public NbdConnectionLostException(String message, long offset, long length, Throwable cause) {
        super(message, offset, length, cause);
    }
}
