package dev.iomap.api;

import java.io.Serial;

/**
 * An atomic write ({@link IomapFile#writeAtomic}) that breaks one of its rules
 * ({@link AtomicWriteLimits#check}): the kernel's EINVAL for an {@code RWF_ATOMIC} write. Nothing was
 * written.
 */
public final class AtomicWriteException extends InvalidRangeException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** The rule broken. */
    private final AtomicWriteLimits.Rule rule;

    /**
     * @param rule the rule broken
     * @param message the write, the value that broke the rule and the limit
     */
    public AtomicWriteException(AtomicWriteLimits.Rule rule, String message) {
        super(message + " (" + rule + ", EINVAL)");
        this.rule = rule;
    }

    /** @return the rule broken */
    public AtomicWriteLimits.Rule rule() {
        return rule;
    }
}
