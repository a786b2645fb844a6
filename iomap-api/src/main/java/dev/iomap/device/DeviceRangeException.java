package dev.iomap.device;

import java.io.IOException;
import java.io.Serial;

/**
 * A device offset or length the device cannot take: negative, not a multiple of the block size,
 * overflowing, or outside {@code [0, capacity())} (the kernel's EINVAL for a bio past the end of the
 * device). Nothing was read or written.
 */
public class DeviceRangeException extends IOException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message which value was wrong and what is allowed */
    public DeviceRangeException(String message) {
        super(message);
    }

    /**
     * Checks a device range.
     *
     * @param what the operation, for the message
     * @param offset start, at least 0
     * @param length bytes, at least 0
     * @param capacity the first offset the range may not reach past
     * @throws DeviceRangeException if the range is negative, overflows or ends past {@code capacity}
     */
    public static void checkRange(String what, long offset, long length, long capacity)
            throws DeviceRangeException {
        if (offset < 0) {
            throw new DeviceRangeException(what + ": negative offset " + offset);
        }
        if (length < 0) {
            throw new DeviceRangeException(what + ": negative length " + length);
        }
        if (offset + length < 0 || offset + length > capacity) {
            throw new DeviceRangeException(what + ": range [" + offset + ", +" + length
                    + ") ends past the device's capacity " + capacity);
        }
    }
}
