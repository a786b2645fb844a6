package dev.iomap.api;

import java.io.Serial;
import java.nio.file.FileSystemException;

/**
 * The operation is never allowed on this kind of file, whoever asks: the kernel's {@code EPERM}, as
 * for a hard link to a directory or a {@code user.*} extended attribute on a symbolic link.
 */
public class OperationNotPermittedException extends FileSystemException {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * @param path the file
     * @param reason why not
     */
    public OperationNotPermittedException(String path, String reason) {
        super(path, null, reason + " (Operation not permitted)");
    }
}
