package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.Set;
import org.cryptomator.jfuse.api.FileInfo;
import org.cryptomator.jfuse.api.Fuse;

/**
 * Binds libfuse3's {@code fallocate} operation, which jfuse 0.7.3 cannot: its
 * {@code FuseOperations.Operation} has no {@code FALLOCATE}, so it never fills that slot of
 * {@code struct fuse_operations}, and the kernel would answer EOPNOTSUPP to every fallocate(2).
 *
 * <p>Before mounting, the slot is set to an upcall stub calling {@link FuseBridge#fallocate}. The
 * struct is jfuse's (a protected field of {@link Fuse}, reached by reflection, which works while
 * jfuse is on the class path). Offsets come from libfuse3's ABI, fixed across 3.x (members are only
 * ever appended): {@code fallocate} is the 40th pointer of {@code struct fuse_operations};
 * {@code fh} is at byte 16 of {@code struct fuse_file_info}. A test checks both against jfuse's own
 * generated layouts. If anything is not as expected, nothing is bound and fallocate stays
 * unsupported.
 */
final class FallocateBinding {
    private static final System.Logger LOG = System.getLogger(FallocateBinding.class.getName());
    /** Byte offset of {@code fallocate} in {@code struct fuse_operations} (index 39, 8-byte pointers). */
    static final long FALLOCATE_SLOT = 39 * 8;
    /** Byte offsets in {@code struct fuse_file_info}. */
    static final long FLAGS_OFFSET = 0;
    static final long FH_OFFSET = 16;
    static final long LOCK_OWNER_OFFSET = 24;
    private static final long FILE_INFO_BYTES = 32;

    private final FuseBridge bridge;

    private FallocateBinding(FuseBridge bridge) {
        this.bridge = bridge;
    }

    /**
     * @param fuse a built, not yet mounted jfuse instance over {@code bridge}
     * @param bridge where fallocate calls go
     * @param arena owns the upcall stub; must stay open until {@code fuse} is closed
     * @return whether fallocate is now bound
     */
    @SuppressWarnings("restricted") // an upcall stub for libfuse: what this class is for
    static boolean bind(Fuse fuse, FuseBridge bridge, Arena arena) {
        Optional<MemorySegment> operations = operationsStruct(fuse);
        if (operations.isEmpty() || operations.get().byteSize() < FALLOCATE_SLOT + ADDRESS.byteSize()) {
            LOG.log(System.Logger.Level.WARNING, "fallocate not bound: jfuse's fuse_operations is not as expected");
            return false;
        }
        try {
            var target = MethodHandles.lookup()
                    .findVirtual(FallocateBinding.class, "fallocate", MethodType.methodType(int.class,
                            MemorySegment.class, int.class, long.class, long.class, MemorySegment.class))
                    .bindTo(new FallocateBinding(bridge));
            MemorySegment stub = Linker.nativeLinker().upcallStub(target,
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS), arena);
            operations.get().set(ADDRESS, FALLOCATE_SLOT, stub);
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "fallocate not bound", e);
            return false;
        }
    }

    private static Optional<MemorySegment> operationsStruct(Fuse fuse) {
        try {
            Field field = Fuse.class.getDeclaredField("fuseOperationsStruct");
            field.setAccessible(true);
            return Optional.of((MemorySegment) field.get(fuse));
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "fallocate not bound: cannot reach jfuse's operations", e);
            return Optional.empty();
        }
    }

    /** The upcall: {@code int fallocate(const char *, int, off_t, off_t, struct fuse_file_info *)}. */
    @SuppressWarnings({"unused", "restricted"}) // called from native code; sizes the pointers libfuse passes
    private int fallocate(MemorySegment path, int mode, long offset, long length, MemorySegment fi) {
        try {
            String name = path.equals(MemorySegment.NULL) ? "" : path.reinterpret(Long.MAX_VALUE).getString(0);
            FileInfo info = fi.equals(MemorySegment.NULL) ? null : new RawFileInfo(fi.reinterpret(FILE_INFO_BYTES));
            if (info == null) {
                return -LinuxErrno.EBADF;
            }
            return bridge.fallocate(name, mode, offset, length, info);
        } catch (Throwable t) {
            return -LinuxErrno.EIO;
        }
    }

    /** A {@code struct fuse_file_info} read in place. */
    private record RawFileInfo(MemorySegment segment) implements FileInfo {
        @Override
        public long getFh() {
            return segment.get(JAVA_LONG, FH_OFFSET);
        }

        @Override
        public void setFh(long fh) {
            segment.set(JAVA_LONG, FH_OFFSET, fh);
        }

        @Override
        public int getFlags() {
            return segment.get(JAVA_INT, FLAGS_OFFSET);
        }

        /** Not decoded: {@link FuseBridge#fallocate} needs only the handle. */
        @Override
        public Set<StandardOpenOption> getOpenFlags() {
            return Set.of();
        }

        @Override
        public long getLockOwner() {
            return segment.get(JAVA_LONG, LOCK_OWNER_OFFSET);
        }
    }
}
