package dev.iomap.spi.lock;

/**
 * A thread asked for a lock while holding one that does not come before it in the lock order
 * ({@link LockName#compareTo}): a bug in the caller, reported by managers that check the order.
 */
public final class LockOrderException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** @param message the lock asked for and the one held that comes after it */
    public LockOrderException(String message) {
        super(message);
    }
}
