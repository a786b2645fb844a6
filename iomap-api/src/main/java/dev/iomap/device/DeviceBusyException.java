package dev.iomap.device;

import java.io.IOException;
import java.io.Serial;

/**
 * The device is in use: its backing image is held by another open device, in this process or
 * another (a mount, {@code mkfs}, {@code fsck}). Nothing was read or written; close the other user
 * first. The kernel's EBUSY for a block device opened exclusively twice.
 */
public class DeviceBusyException extends IOException {
    @Serial
    private static final long serialVersionUID = 1L;


    /** @param message which device is busy and, if known, who holds it */
    public DeviceBusyException(String message) {
        super(message);
    }

    /**
     * @param message which device is busy and, if known, who holds it
     * @param cause the failure that showed it, e.g. an overlapping lock in this process
     */
    public DeviceBusyException(String message, Throwable cause) {
        super(message, cause);
    }
}
