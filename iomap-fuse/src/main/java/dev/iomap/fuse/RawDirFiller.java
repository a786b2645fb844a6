package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.iomap.api.FileNames;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.function.Consumer;
import org.cryptomator.jfuse.api.DirFiller;
import org.cryptomator.jfuse.api.Stat;

/**
 * A {@link DirFiller} that hands libfuse each name as the bytes it stands for
 * ({@link FileNames#encode}, NUL-terminated), by calling libfuse's {@code fuse_fill_dir_t}
 * {@code int (*)(void *buf, const char *name, const struct stat *stbuf, off_t off, enum
 * fuse_fill_dir_flags flags)} itself. jfuse's own filler encodes names as UTF-8, which turns every
 * escaped byte into {@code '?'}.
 *
 * <p>Lives for one readdir upcall, on its thread: names and stats are allocated in the upcall's
 * arena. {@link #fill} throws {@link dev.iomap.api.UnrepresentableNameException} for a name that
 * stands for no byte string (the bridge answers EILSEQ).
 */
final class RawDirFiller implements DirFiller {
    @SuppressWarnings("restricted") // a downcall to the function pointer libfuse passed: what this class is for
    private static final MethodHandle FILL_DIR = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));

    private final MemorySegment buf;
    private final MemorySegment fillDir;
    private final Arena arena;
    private final JfuseStructs structs;

    /**
     * @param buf the {@code buf} argument of libfuse's readdir, passed back unchanged
     * @param fillDir the {@code fuse_fill_dir_t} libfuse passed
     * @param arena where names and stats live until the upcall returns
     * @param structs jfuse's view of {@code struct stat}
     */
    RawDirFiller(MemorySegment buf, MemorySegment fillDir, Arena arena, JfuseStructs structs) {
        this.buf = buf;
        this.fillDir = fillDir;
        this.arena = arena;
        this.structs = structs;
    }

    @Override
    public int fill(String name, Consumer<Stat> statFiller, long offset, int flags) {
        byte[] bytes = FileNames.encode(name);
        MemorySegment cName = arena.allocate(bytes.length + 1L);
        MemorySegment.copy(bytes, 0, cName, JAVA_BYTE, 0, bytes.length);
        MemorySegment stat = arena.allocate(structs.statBytes());
        statFiller.accept(structs.stat(stat));
        try {
            return (int) FILL_DIR.invokeExact(fillDir, buf, cName, stat, offset, flags);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("libfuse's fuse_fill_dir_t failed", t);
        }
    }
}
