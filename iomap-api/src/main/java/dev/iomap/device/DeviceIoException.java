package dev.iomap.device;

import java.io.IOException;
import java.io.Serial;

/** A block device could not read or write a range (the kernel's EIO). */
public class DeviceIoException extends IOException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final long offset;
    private final long length;

    /**
     * @param message what failed
     * @param offset device byte offset of the failed range
     * @param length bytes in it
     * @param cause the underlying error, or null
     */
    public DeviceIoException(String message, long offset, long length, Throwable cause) {
        super(message + " [device offset " + offset + ", length " + length + "]", cause);
        this.offset = offset;
        this.length = length;
    }

    /** @return device byte offset of the failed range */
    public long offset() {
        return offset;
    }

    /** @return bytes in the failed range */
    public long length() {
        return length;
    }
}
