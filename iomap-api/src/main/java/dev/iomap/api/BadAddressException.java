package dev.iomap.api;

import java.io.Serial;

/**
 * The caller's buffer could not be read: touching it faulted, as a memory-mapped file does where it was
 * truncated after it was mapped (the kernel's EFAULT, "Bad address", from a write whose user buffer
 * faults). A write that wrote some bytes before the fault returns that count instead; this is thrown
 * only when the fault came before the first byte was written, and then the file is unchanged.
 */
public class BadAddressException extends IomapException {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * @param message what was being copied, and where
     * @param cause the fault (the JVM's {@link InternalError} for a faulting memory access)
     */
    public BadAddressException(String message, Throwable cause) {
        super(message, cause);
    }
}
