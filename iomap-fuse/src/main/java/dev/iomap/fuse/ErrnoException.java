package dev.iomap.fuse;

import java.io.IOException;

/**
 * A failure whose errno the bridge chose itself (as Linux answers for a local filesystem), not one that
 * {@link ErrnoMapping} derives from an exception of the iomap API: e.g. EPERM for {@code link()} on a
 * file system without hard links.
 */
public final class ErrnoException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The positive errno. */
    private final int errno;

    /**
     * @param errno the positive errno to answer ({@link LinuxErrno})
     * @param message what was refused and why
     */
    public ErrnoException(int errno, String message) {
        super(LinuxErrno.name(errno) + ": " + message);
        this.errno = errno;
    }

    /** @return the positive errno */
    public int errno() {
        return errno;
    }
}
