package dev.iomap.device;

import java.io.IOException;
import java.io.Serial;

/**
 * A write, discard or zone operation on a device opened read-only ({@link BlockDevice#readOnly()}):
 * nothing was written. The kernel refuses a write to a read-only block device the same way (EPERM
 * from the block device, EROFS from a filesystem on it). Open the device for writing, which takes it
 * exclusively, if the write was meant.
 */
public class ReadOnlyDeviceException extends IOException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message which device refused what */
    public ReadOnlyDeviceException(String message) {
        super(message);
    }
}
