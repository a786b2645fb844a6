package dev.iomap.core;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Locale;

/**
 * Bytes of Java heap allocated per operation on the buffered hot paths (issue 19): cached overwrites
 * and cache-hit reads through a block-device file of one cache on a RAM device, measured with
 * {@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes} of the calling thread after a
 * warm-up (so the JIT's escape analysis has had its chance). Only the calling thread is counted: the
 * region written stays under the dirty limits, so no operation here writes back, and what the
 * background flusher allocates is not in the figure. Prints one line per case: case, operations, bytes per
 * operation, and the calling thread's CPU time per operation ({@code getCurrentThreadCpuTime}: unlike
 * wall time it hardly moves when other processes share the machine), then the same CPU time for a bare
 * copy of each size between two native segments, the memcpy limit of this machine.
 *
 * <p>Run: {@code java -cp benchmarks/target/benchmarks.jar dev.iomap.core.AllocationPerOp [OPS]}.
 */
public final class AllocationPerOp {
    private static final long DEVICE_BYTES = 64L << 20;
    private static final int REGION_BYTES = 16 << 20;

    private AllocationPerOp() {
    }

    /** One measured operation at an offset. */
    @FunctionalInterface
    private interface Op {
        void run(OpenFile file, long offset, ByteBuffer buffer) throws IOException;
    }

    /**
     * @param args optionally the number of measured operations per case (default 200000)
     * @throws IOException if the engine or the device fails
     */
    public static void main(String[] args) throws IOException {
        int ops = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        System.out.println("case                               ops  bytes/op  cpu ns/op");
        Op write = (file, offset, buffer) -> file.write(offset, buffer.clear());
        Op read = (file, offset, buffer) -> file.read(offset, buffer.clear());
        measure("overwrite 4k, in cache (4k blocks)", 4096, 4096, false, write, ops);
        measure("overwrite 1k, in cache (1k blocks)", 1024, 1024, false, write, ops);
        measure("overwrite 128k, in cache", 4096, 128 << 10, true, write, ops / 8);
        measure("read 4k, cache hit", 4096, 4096, false, read, ops);
        measure("read 128k, cache hit", 4096, 128 << 10, true, read, ops / 8);
        memcpy("memcpy 1k (the limit)", 1024, ops);
        memcpy("memcpy 4k (the limit)", 4096, ops);
        memcpy("memcpy 128k (the limit)", 128 << 10, ops / 8);
    }

    /** CPU time per copy of {@code size} bytes between two native segments, over a 16 MiB region. */
    private static void memcpy(String name, int size, int ops) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(size, 4096);
            MemorySegment region = arena.allocate(REGION_BYTES, 4096);
            int slots = REGION_BYTES / size;
            for (int round = 0; round < 2; round++) {
                var threads = ManagementFactory.getThreadMXBean();
                long cpu = threads.getCurrentThreadCpuTime();
                for (int i = 0; i < ops; i++) {
                    MemorySegment.copy(src, 0, region, (long) (i % slots) * size, size);
                }
                cpu = threads.getCurrentThreadCpuTime() - cpu;
                if (round == 1) {
                    System.out.println(String.format(Locale.ROOT, "%-32s %8d  %8s  %9.1f", name, ops, "-",
                            (double) cpu / ops));
                }
            }
        }
    }

    /**
     * Fills the region, warms up with {@code ops} operations, then measures {@code ops} more.
     *
     * @param sequential whether offsets follow each other (else a fixed pseudo-random walk)
     */
    private static void measure(String name, int blockSize, int ioSize, boolean sequential, Op op, int ops)
            throws IOException {
        PageCacheOptions options = PageCacheOptions.builder().pageSize(4096).build();
        IomapEngine engine = Bootstrap.start(options);
        try (var device = new RamBlockDevice(blockSize, DEVICE_BYTES);
                IomapCache cache = engine.newCache(device)) {
            OpenFile file = cache.openBlockDevice();
            ByteBuffer fill = ByteBuffer.allocateDirect(1 << 20);
            for (long offset = 0; offset < REGION_BYTES; offset += fill.capacity()) {
                file.write(offset, fill.clear());
            }
            ByteBuffer buffer = ByteBuffer.allocateDirect(ioSize);
            int slots = REGION_BYTES / ioSize;
            run(file, op, buffer, ioSize, slots, sequential, ops);
            var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long thread = Thread.currentThread().threadId();
            long before = threads.getThreadAllocatedBytes(thread);
            long cpu = threads.getCurrentThreadCpuTime();
            run(file, op, buffer, ioSize, slots, sequential, ops);
            cpu = threads.getCurrentThreadCpuTime() - cpu;
            long after = threads.getThreadAllocatedBytes(thread);
            System.out.println(String.format(Locale.ROOT, "%-32s %8d  %8.1f  %9.1f", name, ops,
                    (double) (after - before) / ops, (double) cpu / ops));
        }
    }

    private static void run(OpenFile file, Op op, ByteBuffer buffer, int ioSize, int slots, boolean sequential,
            int ops) throws IOException {
        long walk = 0x9E3779B97F4A7C15L;
        for (int i = 0; i < ops; i++) {
            int slot;
            if (sequential) {
                slot = i % slots;
            } else {
                walk ^= walk << 13;
                walk ^= walk >>> 7;
                walk ^= walk << 17;
                slot = (int) Long.remainderUnsigned(walk, slots);
            }
            op.run(file, (long) slot * ioSize, buffer);
        }
    }
}
