package dev.iomap.api;

import java.io.Serial;

/** An image is not what it claims to be: bad magic, bad checksum, inconsistent metadata. */
public class CorruptFileSystemException extends IomapException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message what is wrong and where (device offset, structure) */
    public CorruptFileSystemException(String message) {
        super(message);
    }
}
