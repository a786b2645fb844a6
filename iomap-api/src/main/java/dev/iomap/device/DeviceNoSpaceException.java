package dev.iomap.device;

import java.io.Serial;

/**
 * A write to a device failed because what holds the device has no room for it: the host filesystem
 * under a file-backed image is full (its {@code ENOSPC}), as the kernel's loop driver reports
 * {@code BLK_STS_NOSPC}. The device itself is sound and the write may succeed once the host has space
 * again; a program that caused the write is told ENOSPC, not EIO.
 */
public class DeviceNoSpaceException extends DeviceIoException {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed, and that the host has no space
     * @param offset device byte offset of the failed range
     * @param length bytes in it
     * @param cause the host's error
     */
    public DeviceNoSpaceException(String message, long offset, long length, Throwable cause) {
        super(message, offset, length, cause);
    }
}
