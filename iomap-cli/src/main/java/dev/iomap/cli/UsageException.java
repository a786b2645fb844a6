package dev.iomap.cli;

import java.io.Serial;

/**
 * Something the user asked for that cannot be done as asked: a bad option value, an unknown
 * {@code --set} key, {@code direct=1} on an adapter without direct I/O. The command prints the
 * message and exits with status 1.
 */
public final class UsageException extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message what is wrong and what to do instead */
    public UsageException(String message) {
        super(message);
    }
}
