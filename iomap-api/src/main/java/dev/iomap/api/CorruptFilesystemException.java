package dev.iomap.api;

/** An image is not what it claims to be: bad magic, bad checksum, inconsistent metadata. */
public class CorruptFilesystemException extends IomapException {

    /** @param message what is wrong and where (device offset, structure) */
    public CorruptFilesystemException(String message) {
        super(message);
    }
}
