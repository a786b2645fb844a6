package dev.iomap.api;

import java.io.Serial;

/**
 * A seek for data or a hole found nothing: the offset is at or past EOF, or (for
 * {@link IomapFile#seekData}) only holes lie between it and EOF. The kernel's {@code ENXIO} from
 * {@code lseek(2)} with {@code SEEK_DATA} or {@code SEEK_HOLE}. Not an error of the file: the
 * caller's loop over data ranges ends here.
 */
public class NoDataException extends IomapException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message the offset sought from, and the file's size */
    public NoDataException(String message) {
        super(message);
    }
}
