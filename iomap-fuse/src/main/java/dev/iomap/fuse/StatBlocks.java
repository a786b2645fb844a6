package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.reflect.Method;
import java.util.Optional;
import org.cryptomator.jfuse.api.Stat;

/**
 * Sets {@code st_blocks} (512-byte units allocated) and {@code st_ino} of a {@code struct stat}, which
 * jfuse 0.7.3's {@link Stat} has no setters for: without {@code st_blocks} every file on a mount says
 * it holds nothing, so {@code du} reports 0 and {@code stat -c %b} cannot show holes; without
 * {@code st_ino} (and libfuse's {@code use_ino}) two names of one file have different inode numbers,
 * so {@code tar}, {@code rsync -H} and {@code cp -a} cannot see hard links.
 *
 * <p>jfuse's {@code Stat} of a platform is a record over the struct's memory ({@code segment()}); the
 * offsets come from the same platform's generated {@code extr.fuse3.stat.st_blocks$offset()} and
 * {@code st_ino$offset()}. All are found by reflection once per class; if one is missing, {@link #set}
 * and {@link #setIno} do nothing and say so by returning false.
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
        return writer.get().write(stat, writer.get().offset(), Math.ceilDiv(Math.max(0, allocatedBytes), 512));
    }

    /**
     * @param stat jfuse's view of a {@code struct stat}
     * @param ino the file's inode number
     * @return whether {@code st_ino} was set
     */
    static boolean setIno(Stat stat, long ino) {
        Optional<Writer> writer = WRITERS.get(stat.getClass());
        return writer.isPresent() && writer.get().write(stat, writer.get().inoOffset(), ino);
    }

    private record Writer(Method segment, long offset, long inoOffset) {
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
                long inoOffset = (long) layout.getMethod("st_ino$offset").invoke(null);
                return Optional.of(new Writer(segment, offset, inoOffset));
            } catch (ReflectiveOperationException | RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "st_blocks cannot be set on " + type.getName(), e);
                return Optional.empty();
            }
        }

        boolean write(Stat stat, long at, long value) {
            try {
                MemorySegment memory = (MemorySegment) segment.invoke(stat);
                if (memory.byteSize() < at + JAVA_LONG.byteSize()) {
                    return false;
                }
                memory.set(JAVA_LONG.withByteAlignment(1), at, value);
                return true;
            } catch (ReflectiveOperationException | RuntimeException e) {
                return false;
            }
        }
    }
}
