package dev.iomap.fuse;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.BooleanSupplier;

/**
 * Whether a FUSE mount is read-only now, from the kernel's mount table ({@link MountTable#isReadOnly}),
 * read at most once a second: the answer {@link FuseBridge} needs before it updates an access time. A
 * {@code mount -o remount,ro} reaches the kernel alone (FUSE has no remount request), so the table is the
 * only place the mount can learn of it; an access-time update within a second of the remount may still be
 * made, as one racing the remount would be on a kernel file system.
 */
final class ReadOnlyProbe implements BooleanSupplier {
    private static final long MAX_AGE_NANOS = 1_000_000_000L;

    private final Path mountPoint;
    private final Object lock = new Object();
    private long readAt;
    private boolean readOnly;
    private boolean known;

    /** @param mountPoint the mount's real path */
    ReadOnlyProbe(Path mountPoint) {
        this.mountPoint = mountPoint;
    }

    /** @return whether the mount is read-only, as the table said at most a second ago; false if it cannot be read */
    @Override
    public boolean getAsBoolean() {
        synchronized (lock) {
            long now = System.nanoTime();
            if (!known || now - readAt >= MAX_AGE_NANOS) {
                try {
                    readOnly = MountTable.isReadOnly(MountTable.read(), mountPoint.toString());
                } catch (IOException e) {
                    readOnly = false;
                }
                readAt = now;
                known = true;
            }
            return readOnly;
        }
    }
}
