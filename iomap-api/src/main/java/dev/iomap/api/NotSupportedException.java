package dev.iomap.api;

import java.io.Serial;
import java.util.Objects;

/**
 * The adapter or device does not do this operation (the kernel's EOPNOTSUPP): a declared-absent
 * capability, never a half-implemented one. Where a filesystem the adapter models answers the same
 * refusal with another error (zonefs: EINVAL for a write that is not an append, EPERM for a truncate
 * to another size than 0 or the capacity), the exception says so in its {@link #refusal()}, so that
 * a POSIX front end (FUSE) reports what the kernel would.
 */
public class NotSupportedException extends IomapException {
    @Serial
    private static final long serialVersionUID = 2L;

    /** How a POSIX front end reports the refusal. */
    public enum Refusal {
        /** The operation is not implemented for this file (EOPNOTSUPP): the default. */
        UNSUPPORTED,
        /** The operation is not one this file takes with these arguments (EINVAL). */
        INVALID_ARGUMENT,
        /** The operation is not permitted on this file (EPERM). */
        NOT_PERMITTED
    }

    private final Refusal refusal;

    /** @param message which operation, and on what */
    public NotSupportedException(String message) {
        this(message, Refusal.UNSUPPORTED);
    }

    /**
     * @param message which operation, and on what
     * @param refusal how a POSIX front end reports it
     */
    public NotSupportedException(String message, Refusal refusal) {
        super(message);
        this.refusal = Objects.requireNonNull(refusal, "refusal");
    }

    /** @return how a POSIX front end reports the refusal; {@link Refusal#UNSUPPORTED} unless the thrower said otherwise */
    public Refusal refusal() {
        return refusal;
    }
}
