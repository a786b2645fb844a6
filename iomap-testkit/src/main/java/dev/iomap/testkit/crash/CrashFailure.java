package dev.iomap.testkit.crash;

/** After a power cut and remount, something made durable was missing or wrong, or fsck complained. */
public final class CrashFailure extends AssertionError {

    CrashFailure(String report, Throwable cause) {
        super(report, cause);
    }
}
