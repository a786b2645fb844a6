package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.reflect.Method;
import java.util.Optional;
import org.cryptomator.jfuse.api.Stat;

/**
 * Sets {@code st_blocks} (512-byte units allocated) of a {@code struct stat}, which jfuse 0.7.3's
 * {@link Stat} has no setter for: without it every file on a mount says it holds nothing, so
 * {@code du} reports 0 and {@code stat -c %b} cannot show holes.
 *
 * <p>jfuse's {@code Stat} of a platform is a record over the struct's memory ({@code segment()}); the
 * offset comes from the same platform's generated {@code extr.fuse3.stat.st_blocks$offset()}. Both
 * are found by reflection once per class; if either is missing, {@link #set} does nothing and says
 * so by returning false.
 */
final class StatBlocks {
    private static final System.Logger LOG = System.getLogger(StatBlocks.class.getName());
    private static final ClassValue<Optional<Writer>> WRITERS = new ClassValue<>() {
        @Override
        protected Optional<Writer> computeValue(Class<?> type) {
            return Writer.of(type);
        }
    };

    private StatBlocks() {
    }

    /**
     * @param stat jfuse's view of a {@code struct stat}
     * @param allocatedBytes the bytes the file holds on the device
     * @return whether {@code st_blocks} was set (to {@code allocatedBytes} in 512-byte units, rounded up)
     */
    static boolean set(Stat stat, long allocatedBytes) {
        Optional<Writer> writer = WRITERS.get(stat.getClass());
        if (writer.isEmpty()) {
            return false;
        }
        return writer.get().write(stat, Math.ceilDiv(Math.max(0, allocatedBytes), 512));
    }

    private record Writer(Method segment, long offset) {
        static Optional<Writer> of(Class<?> type) {
            try {
                Method segment = type.getDeclaredMethod("segment");
                if (segment.getReturnType() != MemorySegment.class) {
                    return Optional.empty();
                }
                segment.setAccessible(true);
                Class<?> layout = Class.forName(type.getPackageName() + ".extr.fuse3.stat", true,
                        type.getClassLoader());
                long offset = (long) layout.getMethod("st_blocks$offset").invoke(null);
                return Optional.of(new Writer(segment, offset));
            } catch (ReflectiveOperationException | RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "st_blocks cannot be set on " + type.getName(), e);
                return Optional.empty();
            }
        }

        boolean write(Stat stat, long blocks) {
            try {
                MemorySegment memory = (MemorySegment) segment.invoke(stat);
                if (memory.byteSize() < offset + JAVA_LONG.byteSize()) {
                    return false;
                }
                memory.set(JAVA_LONG.withByteAlignment(1), offset, blocks);
                return true;
            } catch (ReflectiveOperationException | RuntimeException e) {
                return false;
            }
        }
    }
}
