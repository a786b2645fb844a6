package dev.iomap.api;

import java.io.Serial;

/**
 * The filesystem shut itself down, as XFS does on a forced shutdown: it found its metadata
 * inconsistent while running (a block about to be handed out that a file still references, a free of
 * a free block, an extent past the device, a new inode number that a name already points at) and
 * stopped before writing on top of it.
 *
 * <p>After a shutdown every operation of that mount fails with this exception, an I/O error (EIO),
 * carrying the one-line reason of the first failure; nothing more is written to the device, and
 * unmount leaves the image marked unclean, so the next mount or fsck looks at it again. Unmount the
 * filesystem and run fsck.
 */
public class FileSystemShutdownException extends IomapException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message the one-line reason the filesystem shut down, naming the structure and where it is */
    public FileSystemShutdownException(String message) {
        super(message);
    }
}
