package dev.iomap.cli.jobfile;

import java.io.Serial;

/**
 * A job file the benchmark cannot run: a syntax error, an unknown or unsupported option, or a bad
 * value. The message names the option or value and the line ({@code job.fio:12}).
 */
public final class JobFileException extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /** @param message what is wrong, where, and where it helps what to write instead */
    public JobFileException(String message) {
        super(message);
    }

    /**
     * @param message what is wrong and where
     * @param cause the underlying error
     */
    public JobFileException(String message, Throwable cause) {
        super(message, cause);
    }
}
