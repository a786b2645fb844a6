package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicBoolean;
import org.cryptomator.jfuse.api.Statvfs;

/**
 * Fills the inode counts of {@code statvfs} ({@code f_files}, {@code f_ffree}, {@code f_favail}),
 * which jfuse 0.7.3's {@link Statvfs} has no setters for, so that {@code df -i} shows them: as
 * {@link DirectIoConfig} does for {@code fuse_config}, it writes the fields through the memory
 * segment behind jfuse's {@code Statvfs} at the offsets of jfuse's generated layout class
 * ({@code <platform package>.extr.fuse3.statvfs.f_files$offset()}), both reached by reflection.
 */
final class StatvfsInodes {
    private static final System.Logger LOG = System.getLogger(StatvfsInodes.class.getName());
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private StatvfsInodes() {
    }

    /**
     * @param statvfs jfuse's view of the struct libfuse passed to the statfs operation
     * @param files inodes the filesystem can hold
     * @param free inodes still available
     * @return whether the fields were written (false, with one warning per process, if jfuse's
     *     implementation is not the one this knows)
     */
    @SuppressWarnings("restricted") // resizing jfuse's view of libfuse's struct to reach three fields
    static boolean set(Statvfs statvfs, long files, long free) {
        try {
            Class<?> impl = statvfs.getClass();
            Method segmentAccessor = impl.getDeclaredMethod("segment");
            segmentAccessor.setAccessible(true);
            MemorySegment segment = (MemorySegment) segmentAccessor.invoke(statvfs);
            Class<?> layout = Class.forName(impl.getPackageName() + ".extr.fuse3.statvfs", true,
                    impl.getClassLoader());
            long filesAt = (long) layout.getMethod("f_files$offset").invoke(null);
            long freeAt = (long) layout.getMethod("f_ffree$offset").invoke(null);
            long availableAt = (long) layout.getMethod("f_favail$offset").invoke(null);
            long end = Math.max(filesAt, Math.max(freeAt, availableAt)) + JAVA_LONG.byteSize();
            MemorySegment fields = segment.reinterpret(end);
            fields.set(JAVA_LONG, filesAt, files);
            fields.set(JAVA_LONG, freeAt, free);
            fields.set(JAVA_LONG, availableAt, free);
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            if (WARNED.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.WARNING, "cannot set the inode counts of statfs through jfuse;"
                        + " df -i shows 0 inodes", e);
            }
            return false;
        }
    }
}
