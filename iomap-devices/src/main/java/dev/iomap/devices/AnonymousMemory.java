package dev.iomap.devices;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * A large region of off-heap memory that costs nothing until it is touched: an anonymous private
 * mapping ({@code mmap(MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)}), aligned as asked, optionally
 * marked for transparent huge pages ({@code madvise(MADV_HUGEPAGE)}), and unmapped by {@link #close()}.
 *
 * <p>Why: {@link Arena#allocate} clears what it allocates, so every page of a large allocation is
 * faulted in at once, one 4 KiB page fault at a time. A page cache's folio memory is better served the
 * way the kernel serves its own (from the direct map, in huge pages): the region is only address
 * space until a folio first uses it, and with huge pages one fault maps 2 MiB and the copies into it
 * miss the TLB 512 times less often. The memory reads as zeroes until written, as with any anonymous
 * mapping.
 *
 * <p>On Linux (x86_64, aarch64) with native access allowed, {@link #tryMap} maps; elsewhere, or if
 * the kernel refuses, it returns null and the caller allocates as it would have without it. Huge pages
 * are a hint: the kernel may still back the region with small pages ({@code transparent_hugepage=never},
 * fragmentation).
 *
 * <p>Thread-safe. After {@link #close()} the segment is no longer accessible (access throws
 * {@link IllegalStateException}, never touches unmapped memory); closing waits for no one, so the
 * owner makes sure nobody still does I/O into the region.
 */
public final class AnonymousMemory implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(AnonymousMemory.class.getName());
    /** Linux values, the same on x86_64 and aarch64. */
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_ANONYMOUS = 0x20;
    private static final int MAP_NORESERVE = 0x4000;
    private static final int MADV_HUGEPAGE = 14;
    /** The size of a transparent huge page on x86_64 and on aarch64 with 4 KiB pages. */
    public static final long HUGE_PAGE_SIZE = 2L << 20;

    private static final Calls CALLS = Calls.load();

    private final Arena arena;
    private final MemorySegment segment;

    private AnonymousMemory(Arena arena, MemorySegment segment) {
        this.arena = arena;
        this.segment = segment;
    }

    /**
     * Maps {@code bytes} of zeroed memory at an address aligned to {@code alignment}; null where an
     * anonymous mapping cannot be had, so that a caller reserving far more than it will use can
     * allocate piecemeal instead.
     *
     * @param bytes the size, positive
     * @param alignment a power of two (the mapping is at least page aligned whatever is asked)
     * @param hugePages whether to ask for transparent huge pages
     * @return the mapped region, to be closed to give the memory back; or null
     * @throws IllegalArgumentException if {@code bytes} is not positive or {@code alignment} not a
     *     power of two
     */
    @SuppressWarnings("MustBeClosedChecker") // the arena goes to the returned region, or is closed here
    public static AnonymousMemory tryMap(long bytes, long alignment, boolean hugePages) {
        checkArguments(bytes, alignment);
        if (CALLS == null) {
            return null;
        }
        Arena arena = Arena.ofShared();
        AnonymousMemory region = CALLS.map(bytes, alignment, hugePages, arena);
        if (region == null) {
            arena.close();
        }
        return region;
    }

    /**
     * Like {@link #tryMap}, but the mapping has no owner to close it: it is unmapped once neither the
     * returned segment nor any slice of it is reachable (an {@link Arena#ofAuto() automatic arena}'s
     * cleanup), as memory a device hands out in pieces must be.
     *
     * @param bytes the size, positive
     * @param alignment a power of two
     * @param hugePages whether to ask for transparent huge pages
     * @return the mapped memory, or null where an anonymous mapping cannot be had
     * @throws IllegalArgumentException if {@code bytes} is not positive or {@code alignment} not a
     *     power of two
     */
    public static MemorySegment tryMapUntilUnreachable(long bytes, long alignment, boolean hugePages) {
        checkArguments(bytes, alignment);
        if (CALLS == null) {
            return null;
        }
        AnonymousMemory region = CALLS.map(bytes, alignment, hugePages, Arena.ofAuto());
        return region == null ? null : region.segment;
    }

    /** @return the memory, {@code bytes} long, inaccessible after {@link #close()} */
    public MemorySegment segment() {
        return segment;
    }

    /** Unmaps the region. Idempotent. */
    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }

    private static void checkArguments(long bytes, long alignment) {
        if (bytes <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("need bytes > 0 and a power-of-two alignment, got " + bytes
                    + " and " + alignment);
        }
    }

    /** The C library calls; null where they cannot be used. */
    private record Calls(MethodHandle mmap, MethodHandle munmap, MethodHandle madvise) {
        @SuppressWarnings("restricted") // downcalls to libc's mmap, munmap and madvise: what this class is for
        static Calls load() {
            String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
            String arch = System.getProperty("os.arch", "");
            if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64"))) {
                return null;
            }
            try {
                Linker linker = Linker.nativeLinker();
                var libc = linker.defaultLookup();
                MethodHandle mmap = linker.downcallHandle(libc.find("mmap").orElseThrow(),
                        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
                MethodHandle munmap = linker.downcallHandle(libc.find("munmap").orElseThrow(),
                        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
                MethodHandle madvise = linker.downcallHandle(libc.find("madvise").orElseThrow(),
                        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
                return new Calls(mmap, munmap, madvise);
            } catch (RuntimeException | Error e) { // IllegalCallerException without native access
                LOG.log(System.Logger.Level.DEBUG, "anonymous mappings unavailable, using arenas: {0}", e.toString());
                return null;
            }
        }

        /**
         * Maps {@code bytes + alignment} and unmaps what lies before the aligned start and after its
         * end, so the region is aligned without wasting address space.
         */
        @SuppressWarnings({"restricted", "MustBeClosedChecker"}) // the mapping becomes a segment of the
        // returned region's arena, whose close unmaps it
        AnonymousMemory map(long bytes, long alignment, boolean hugePages, Arena arena) {
            try {
                long align = Math.max(alignment, 4096);
                long length = Math.ceilDiv(bytes, 4096) * 4096;
                long asked = length + align;
                MemorySegment raw = (MemorySegment) mmap.invokeExact(MemorySegment.NULL, asked, PROT_READ_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0L);
                long base = raw.address();
                if (base == -1L || base == 0L) {
                    return null;
                }
                long start = (base + align - 1) & -align;
                long head = start - base;
                long tail = asked - head - length;
                if (head > 0) {
                    int _ = (int) munmap.invokeExact(MemorySegment.ofAddress(base), head);
                }
                if (tail > 0) {
                    int _ = (int) munmap.invokeExact(MemorySegment.ofAddress(start + length), tail);
                }
                if (hugePages) {
                    // a hint: EINVAL where transparent huge pages are not built in is harmless
                    int _ = (int) madvise.invokeExact(MemorySegment.ofAddress(start), length, MADV_HUGEPAGE);
                }
                MethodHandle unmap = munmap;
                MemorySegment segment = MemorySegment.ofAddress(start).reinterpret(length, arena, _ -> {
                    try {
                        int _ = (int) unmap.invokeExact(MemorySegment.ofAddress(start), length);
                    } catch (Throwable t) {
                        LOG.log(System.Logger.Level.WARNING, "munmap failed: {0}", t.toString());
                    }
                }).asSlice(0, bytes);
                return new AnonymousMemory(arena, segment);
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.DEBUG, "mmap failed, using an arena: {0}", t.toString());
                return null;
            }
        }
    }
}
