package dev.iomap.api;

import java.io.Serial;

/**
 * An offset or length the operation cannot take: negative, unaligned where alignment is required,
 * overflowing, or outside a device or the largest file size (the kernel's EINVAL, EFBIG).
 */
public class InvalidRangeException extends IomapException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message which value was wrong and what is allowed */
    public InvalidRangeException(String message) {
        super(message);
    }

    /**
     * Checks a file range.
     *
     * @param what the operation, for the message
     * @param offset start, at least 0
     * @param length bytes, at least 0
     * @param maxEnd the first offset the range may not reach past
     * @throws InvalidRangeException if the range is negative, overflows or ends past {@code maxEnd}
     */
    public static void checkRange(String what, long offset, long length, long maxEnd)
            throws InvalidRangeException {
        if (offset < 0) {
            throw new InvalidRangeException(what + ": negative offset " + offset);
        }
        if (length < 0) {
            throw new InvalidRangeException(what + ": negative length " + length);
        }
        if (offset + length < 0 || offset + length > maxEnd) {
            throw new InvalidRangeException(what + ": range [" + offset + ", +" + length
                    + ") ends past the limit " + maxEnd);
        }
    }
}
