package dev.iomap.fuse;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.time.Instant;
import java.util.Optional;
import org.cryptomator.jfuse.api.FileInfo;
import org.cryptomator.jfuse.api.Stat;
import org.cryptomator.jfuse.api.Statvfs;
import org.cryptomator.jfuse.api.TimeSpec;

/**
 * jfuse's own views of libfuse's C structs ({@code struct stat}, {@code struct statvfs},
 * {@code struct timespec}, {@code struct fuse_file_info}) for upcalls this module binds itself
 * ({@link RawPathBinding}), so that no struct layout is repeated here: the package-private records
 * of jfuse's platform package ({@code StatImpl}, {@code StatvfsImpl}, {@code TimeSpecImpl},
 * {@code FileInfoImpl}) and the sizes from its generated layout classes
 * ({@code <platform package>.extr.fuse3.stat.sizeof()}, ...), for the platform jfuse runs on (Linux
 * amd64 or aarch64). All are reached by reflection, which works while jfuse is on the class path.
 *
 * <p>Each view is given the pointer libfuse passed, sized to the struct. Immutable and thread-safe.
 */
final class JfuseStructs {
    private static final System.Logger LOG = System.getLogger(JfuseStructs.class.getName());

    private final MethodHandle stat;
    private final MethodHandle statvfs;
    private final MethodHandle timeSpec;
    private final MethodHandle fileInfo;
    private final long statBytes;
    private final long statvfsBytes;
    private final long timeSpecBytes;
    private final long fileInfoBytes;

    private JfuseStructs(String platform) throws ReflectiveOperationException {
        stat = view(platform + ".StatImpl", Stat.class);
        statvfs = view(platform + ".StatvfsImpl", Statvfs.class);
        timeSpec = view(platform + ".TimeSpecImpl", TimeSpec.class);
        fileInfo = view(platform + ".FileInfoImpl", FileInfo.class);
        statBytes = size(platform, "stat");
        statvfsBytes = size(platform, "statvfs");
        timeSpecBytes = size(platform, "timespec");
        fileInfoBytes = size(platform, "fuse_file_info");
    }

    /**
     * @param platform jfuse's platform package, such as {@code org.cryptomator.jfuse.linux.amd64}
     *     (the package of the {@code Fuse} its builder built)
     * @return its structs, if every class and member is there and each view reads and writes a zeroed
     *     struct of its size; empty otherwise (with the reason logged)
     */
    static Optional<JfuseStructs> find(String platform) {
        try {
            var structs = new JfuseStructs(platform);
            structs.tryOnZeroedMemory();
            return Optional.of(structs);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "jfuse's structs in " + platform + " are not as expected", e);
            return Optional.empty();
        }
    }

    private static MethodHandle view(String className, Class<?> type) throws ReflectiveOperationException {
        Constructor<?> constructor = Class.forName(className, true, JfuseStructs.class.getClassLoader())
                .getDeclaredConstructor(MemorySegment.class);
        if (!type.isAssignableFrom(constructor.getDeclaringClass())) {
            throw new ClassCastException(className + " is not a " + type.getName());
        }
        constructor.setAccessible(true);
        return MethodHandles.lookup().unreflectConstructor(constructor)
                .asType(MethodType.methodType(type, MemorySegment.class));
    }

    private static long size(String platform, String struct) throws ReflectiveOperationException {
        long bytes = (long) Class.forName(platform + ".extr.fuse3." + struct, true, JfuseStructs.class.getClassLoader())
                .getMethod("sizeof").invoke(null);
        if (bytes <= 0) {
            throw new IllegalStateException("struct " + struct + " of " + bytes + " bytes");
        }
        return bytes;
    }

    /** Each view once over zeroed memory of its struct's size: a setter and a getter, nothing out of bounds. */
    private void tryOnZeroedMemory() {
        try (Arena arena = Arena.ofConfined()) {
            Stat s = stat(arena.allocate(statBytes));
            s.setMode(Stat.S_IFREG);
            s.mTime().set(Instant.EPOCH);
            Statvfs v = statvfs(arena.allocate(statvfsBytes));
            v.setNameMax(1);
            FileInfo f = fileInfo(arena.allocate(fileInfoBytes));
            f.setFh(1);
            if (s.getMode() != Stat.S_IFREG || v.getNameMax() != 1 || f.getFh() != 1 || f.getFlags() != 0
                    || timeSpec(arena.allocate(2 * timeSpecBytes), 1).isUtimeNow()) {
                throw new IllegalStateException("jfuse's structs read back something else than was written");
            }
        }
    }

    /** @return the size of {@code struct stat} in bytes */
    long statBytes() {
        return statBytes;
    }

    /**
     * @param pointer a {@code struct stat *} from libfuse, not NULL
     * @return jfuse's view of it
     */
    @SuppressWarnings("restricted") // sizing libfuse's pointer to the struct it points to
    Stat stat(MemorySegment pointer) {
        return (Stat) invoke(stat, pointer.reinterpret(statBytes));
    }

    /**
     * @param pointer a {@code struct statvfs *} from libfuse, not NULL
     * @return jfuse's view of it
     */
    @SuppressWarnings("restricted") // sizing libfuse's pointer to the struct it points to
    Statvfs statvfs(MemorySegment pointer) {
        return (Statvfs) invoke(statvfs, pointer.reinterpret(statvfsBytes));
    }

    /**
     * @param array a {@code struct timespec[]} from libfuse, not NULL
     * @param index which element
     * @return jfuse's view of it
     */
    @SuppressWarnings("restricted") // sizing libfuse's pointer to the array it points to
    TimeSpec timeSpec(MemorySegment array, int index) {
        return (TimeSpec) invoke(timeSpec, array.reinterpret((index + 1) * timeSpecBytes)
                .asSlice(index * timeSpecBytes));
    }

    /**
     * @param pointer a {@code struct fuse_file_info *} from libfuse, or NULL
     * @return jfuse's view of it, or null for NULL (as jfuse gives the bridge)
     */
    @SuppressWarnings("restricted") // sizing libfuse's pointer to the struct it points to
    FileInfo fileInfo(MemorySegment pointer) {
        if (pointer.equals(MemorySegment.NULL)) {
            return null;
        }
        return (FileInfo) invoke(fileInfo, pointer.reinterpret(fileInfoBytes));
    }

    private static Object invoke(MethodHandle view, MemorySegment struct) {
        try {
            return view.invoke(struct);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("jfuse's view of a struct failed", t);
        }
    }
}
