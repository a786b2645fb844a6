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
 */
final class DirectIoConfig {
    private static final System.Logger LOG = System.getLogger(DirectIoConfig.class.getName());

    private DirectIoConfig() {
    }

    /**
     * @param config the configuration libfuse passed to {@code init}
     * @return whether {@code config.directIo()} now reads 1
     */
    @SuppressWarnings("restricted") // resizing jfuse's view of libfuse's struct to reach one field
    static boolean enable(FuseConfig config) {
        try {
            Class<?> impl = config.getClass();
            Method segmentAccessor = impl.getDeclaredMethod("segment");
            segmentAccessor.setAccessible(true);
            MemorySegment segment = (MemorySegment) segmentAccessor.invoke(config);
            Class<?> layout = Class.forName(impl.getPackageName() + ".extr.fuse3.fuse_config", true,
                    impl.getClassLoader());
            long offset = (long) layout.getMethod("direct_io$offset").invoke(null);
            segment.reinterpret(offset + JAVA_INT.byteSize()).set(JAVA_INT, offset, 1);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot turn on FUSE direct_io through jfuse; the kernel page"
                    + " cache stays in the data path", e);
            return false;
        }
        return config.directIo() != 0;
    }
}
