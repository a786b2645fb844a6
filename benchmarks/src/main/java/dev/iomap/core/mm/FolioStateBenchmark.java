package dev.iomap.core.mm;

import dev.iomap.api.StateLock;
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
 * The per-write cost of the folio state: marking a copied range uptodate and dirty with one lock
 * cycle (COMBINED) or two (SEPARATE), the write_end change of the 2024 series, and the searches
 * writeback does. Geometry: a 64 KiB folio of 1 KiB blocks (the fstime-w shape) and a 2 MiB folio of
 * 4 KiB blocks.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FolioStateBenchmark {

    /** Folio geometry: folio size / block size. */
    @Param({"65536/1024", "2097152/4096"})
    public String geometry;

    /** How write_end takes the state lock. */
    @Param({"SEPARATE", "COMBINED"})
    public StateLock stateLock;

    private FolioState state;
    private int blockSize;
    private int folioSize;
    private int offset;

    /** Builds an uptodate, clean state. */
    @Setup
    public void setUp() {
        String[] parts = geometry.split("/");
        folioSize = Integer.parseInt(parts[0]);
        blockSize = Integer.parseInt(parts[1]);
        state = new FolioState(folioSize, Integer.numberOfTrailingZeros(blockSize), true, false);
    }

    /**
     * write_end of a one-block overwrite: uptodate and dirty bits for the copied block.
     *
     * @return whether the folio is fully uptodate (consumed so the call is not dead code)
     */
    @Benchmark
    public boolean writeEnd() {
        offset = (offset + blockSize) & (folioSize - 1);
        return state.markWritten(stateLock, offset, blockSize, blockSize);
    }

    /**
     * What writeback does per folio: find the dirty runs, then clear them.
     *
     * @return the number of dirty runs found
     */
    @Benchmark
    public int findAndClearDirtyRuns() {
        state.setRangeDirty(blockSize, 3 * blockSize);
        state.setRangeDirty(folioSize / 2, blockSize);
        int runs = 0;
        int at = 0;
        while (at < folioSize) {
            int start = state.nextDirtyBlock(at, folioSize);
            if (start < 0) {
                break;
            }
            at = state.nextCleanBlock(start, folioSize);
            runs++;
        }
        state.clearAllDirty();
        return runs;
    }
}
