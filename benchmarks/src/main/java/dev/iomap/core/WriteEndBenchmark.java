package dev.iomap.core;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.StateLock;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The whole buffered write of one 1 KiB block into a cached 64 KiB folio on a 1 KiB-block file
 * (UnixBench fstime-w's shape from the 2024 series): write_begin, copy, write_end, with the state
 * lock taken once or twice in write_end. Dirty data is written back now and then, outside the
 * measured work's control, as the flusher would.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class WriteEndBenchmark {
    private static final int FILE = 2000 * 1024;

    /** How write_end takes the state lock. */
    @Param({"SEPARATE", "COMBINED"})
    public StateLock stateLock;

    private CachedInode inode;
    private final CopySource source = (MemorySegment dst, long offset, int length) -> {
        dst.asSlice(offset, length).fill((byte) 0x5a);
        return length;
    };
    private long pos;

    /** A 2000 KiB file, written once so every folio is cached and uptodate. */
    @Setup
    public void setUp() throws IOException {
        RamBlockDevice device = new RamBlockDevice(1024, 64L << 20);
        PageCacheOptions options = PageCacheOptions.builder().pageSize(65536).maxFolioOrder(0)
                .stateLock(stateLock).dirtyBackgroundBytes(1L << 30).dirtyLimitBytes(1L << 30)
                .cacheBudgetBytes(1L << 30).build();
        IomapCache cache = new IomapCache(options, device);
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        inode = cache.addInode(1, 1024, 0, FILE, mapping, mapping);
        for (long at = 0; at < FILE; at += 1024) {
            inode.write(at, source, 1024);
        }
    }

    /**
     * One 1 KiB overwrite, sequential, wrapping at the end of the file.
     *
     * @return bytes written
     * @throws IOException never, on a RAM device
     */
    @Benchmark
    public long overwrite1k() throws IOException {
        long written = inode.write(pos, source, 1024);
        pos += 1024;
        if (pos == FILE) {
            pos = 0;
            inode.writeback(0, Long.MAX_VALUE, false);
        }
        return written;
    }
}
