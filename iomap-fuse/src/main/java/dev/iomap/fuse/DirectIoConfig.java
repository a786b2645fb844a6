package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;
import java.lang.reflect.Method;
import org.cryptomator.jfuse.api.FuseConfig;

/**
 * Turns on libfuse3's {@code direct_io} for a mount, which jfuse 0.7.3 gives no way to do: libfuse
 * 3 dropped the {@code -o direct_io} option (a file system sets {@code fuse_config.direct_io} in its
 * {@code init} instead, and libfuse then sets {@code direct_io} in the {@code fuse_file_info} of every
 * open and create), and jfuse's {@link FuseConfig} has getters only, and its {@code FileInfo} no
 * {@code direct_io} bit.
 *
 * <p>So, from {@code init}, this writes the field through jfuse's own view of the struct: the
 * memory segment behind its {@link FuseConfig} and the field offset from its generated layout class
 * ({@code <platform package>.extr.fuse3.fuse_config.direct_io$offset()}), both reached by reflection
 * while jfuse is on the class path. It then reads the field back through jfuse's getter.
 *
 * <p>{@code fuse_config.use_ino} is set the same way ({@link #useIno}): libfuse 3 dropped
 * {@code -o use_ino} too.
 */
final class DirectIoConfig {
    private static final System.Logger LOG = System.getLogger(DirectIoConfig.class.getName());

    private DirectIoConfig() {
    }

    /**
     * @param config the configuration libfuse passed to {@code init}
     * @return whether {@code config.directIo()} now reads 1
     */
    static boolean enable(FuseConfig config) {
        return setToOne(config, "direct_io", "the kernel page cache stays in the data path")
                && config.directIo() != 0;
    }

    /**
     * Sets {@code fuse_config.use_ino}: libfuse then passes the {@code st_ino} that getattr and readdir
     * fill in to the kernel, instead of its own node numbers (which differ for two names of one file).
     *
     * @param config the configuration libfuse passed to {@code init}
     * @return whether {@code config.useIno()} now reads 1
     */
    static boolean useIno(FuseConfig config) {
        return setToOne(config, "use_ino", "inode numbers are libfuse's, so hard links look like two files")
                && config.useIno() != 0;
    }

    /**
     * Sets {@code fuse_config.attr_timeout} to 0: the kernel asks getattr on every stat. libfuse's
     * high-level API gives each name of a hard-linked file its own kernel inode, so with the default
     * one-second cache a link or unlink through one name left the others showing the old link count
     * (and ctime) for up to a second, and {@code rsync -H} split the links it read.
     *
     * @param config the configuration libfuse passed to {@code init}
     * @return whether {@code config.attrTimeout()} now reads 0
     */
    static boolean noAttributeCache(FuseConfig config) {
        return set(config, "attr_timeout", java.lang.foreign.ValueLayout.JAVA_DOUBLE, 0.0,
                "another name of a hard-linked file may show a stale link count for a second")
                && config.attrTimeout() == 0.0;
    }

    private static boolean setToOne(FuseConfig config, String field, String otherwise) {
        return set(config, field, JAVA_INT, 1, otherwise);
    }

    @SuppressWarnings("restricted") // resizing jfuse's view of libfuse's struct to reach one field
    private static boolean set(FuseConfig config, String field, java.lang.foreign.ValueLayout layoutOfField,
            Object value, String otherwise) {
        try {
            Class<?> impl = config.getClass();
            Method segmentAccessor = impl.getDeclaredMethod("segment");
            segmentAccessor.setAccessible(true);
            MemorySegment segment = (MemorySegment) segmentAccessor.invoke(config);
            Class<?> layout = Class.forName(impl.getPackageName() + ".extr.fuse3.fuse_config", true,
                    impl.getClassLoader());
            long offset = (long) layout.getMethod(field + "$offset").invoke(null);
            MemorySegment view = segment.reinterpret(offset + layoutOfField.byteSize());
            if (layoutOfField instanceof java.lang.foreign.ValueLayout.OfDouble ofDouble) {
                view.set(ofDouble, offset, (Double) value);
            } else {
                view.set(JAVA_INT, offset, (Integer) value);
            }
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot set FUSE " + field + " through jfuse; " + otherwise, e);
            return false;
        }
    }
}
