package dev.iomap.testkit.crash;

import java.io.Serial;

/** After a power cut and remount, something made durable was missing or wrong, or fsck complained. */
public final class CrashFailure extends AssertionError {
    @Serial
    private static final long serialVersionUID = 1L;

    CrashFailure(String report, Throwable cause) {
        super(report, cause);
    }
}
