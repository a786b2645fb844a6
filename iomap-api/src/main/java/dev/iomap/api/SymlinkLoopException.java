package dev.iomap.api;

import java.io.Serial;
import java.nio.file.FileSystemException;

/**
 * Resolving a path followed more than {@value IomapFileSystem#MAX_SYMLINK_FOLLOWS} symbolic links:
 * the kernel's {@code ELOOP}.
 */
public class SymlinkLoopException extends FileSystemException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param path the path being resolved */
    public SymlinkLoopException(String path) {
        super(path, null, "Too many levels of symbolic links");
    }
}
