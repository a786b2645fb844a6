package dev.iomap.core.mm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.StateLock;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Random range operations on a {@link FolioState} checked against two boolean arrays. */
class FolioStateModelTest {
    private static final long SEED = Long.getLong("iomap.test.seed", 0);
    private static final int OPS = Integer.getInteger("iomap.test.ops", 2_000);

    @ParameterizedTest
    @ValueSource(ints = {2, 16, 63, 64, 65, 200, 2048})
    void matchesABooleanModel(int blocks) {
        int shift = 9;
        int block = 1 << shift;
        int size = blocks * block;
        Random random = new Random(SEED * 31 + blocks);
        FolioState state = new FolioState(size, shift, false, false);
        boolean[] uptodate = new boolean[blocks];
        boolean[] dirty = new boolean[blocks];
        for (int op = 0; op < OPS; op++) {
            int offset = random.nextInt(size);
            int length = 1 + random.nextInt(size - offset);
            int first = offset >> shift;
            int last = (offset + length - 1) >> shift;
            switch (random.nextInt(4)) {
                case 0 -> {
                    state.setRangeUptodate(offset, length);
                    fill(uptodate, first, last, true);
                }
                case 1 -> {
                    state.setRangeDirty(offset, length);
                    fill(dirty, first, last, true);
                }
                case 2 -> {
                    state.clearRangeDirty(offset, length);
                    int covered = (offset + block - 1) >> shift;
                    int coveredEnd = (offset + length) >> shift;
                    fill(dirty, covered, coveredEnd - 1, false);
                }
                default -> {
                    StateLock mode = random.nextBoolean() ? StateLock.COMBINED : StateLock.SEPARATE;
                    state.markWritten(mode, offset, length, length);
                    fill(uptodate, first, last, true);
                    fill(dirty, first, last, true);
                }
            }
            int from = random.nextInt(blocks) * block;
            int limit = from + random.nextInt(size - from + 1);
            assertThat(state.nextDirtyBlock(from, limit)).as("op %d", op).isEqualTo(next(dirty, from, limit, block, true, -1));
            assertThat(state.nextCleanBlock(from, limit)).isEqualTo(next(dirty, from, limit, block, false, roundUp(limit, block)));
            assertThat(state.nextUptodateBlock(from, limit)).isEqualTo(next(uptodate, from, limit, block, true, -1));
            assertThat(state.nextNotUptodateBlock(from, limit)).isEqualTo(next(uptodate, from, limit, block, false, roundUp(limit, block)));
            assertThat(state.isFullyUptodate()).isEqualTo(all(uptodate));
        }
    }

    private static void fill(boolean[] bits, int first, int last, boolean value) {
        for (int i = first; i <= last; i++) {
            bits[i] = value;
        }
    }

    private static int next(boolean[] bits, int from, int limit, int block, boolean value, int none) {
        for (int i = from / block; i * block < limit && i < bits.length; i++) {
            if (bits[i] == value) {
                return i * block;
            }
        }
        return none;
    }

    private static int roundUp(int value, int block) {
        return (value + block - 1) / block * block;
    }

    private static boolean all(boolean[] bits) {
        for (boolean bit : bits) {
            if (!bit) {
                return false;
            }
        }
        return true;
    }
}
