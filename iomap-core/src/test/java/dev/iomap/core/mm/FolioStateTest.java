package dev.iomap.core.mm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.StateLock;
import org.junit.jupiter.api.Test;

class FolioStateTest {
    private static final int BLOCK = 1024;
    private static final int SHIFT = 10;
    private static final int FOLIO = 16 * BLOCK;

    @Test
    void partialDirtyClearKeepsPartlyClearedEdgeBlocksDirty() {
        FolioState state = new FolioState(FOLIO, SHIFT, true, true);

        // From the middle of block 1 to the middle of block 4: only blocks 2 and 3 are covered.
        state.clearRangeDirty(BLOCK + 100, 3 * BLOCK);

        assertThat(state.isBlockDirty(0)).isTrue();
        assertThat(state.isBlockDirty(BLOCK)).isTrue();
        assertThat(state.isBlockDirty(2 * BLOCK)).isFalse();
        assertThat(state.isBlockDirty(3 * BLOCK)).isFalse();
        assertThat(state.isBlockDirty(4 * BLOCK)).isTrue();
        assertThat(state.isBlockDirty(5 * BLOCK)).isTrue();
    }

    @Test
    void dirtyClearInsideOneBlockClearsNothing() {
        FolioState state = new FolioState(FOLIO, SHIFT, true, true);
        state.clearRangeDirty(10, BLOCK - 20);
        assertThat(state.isBlockDirty(0)).isTrue();
    }

    @Test
    void newStateInheritsFolioWideUptodateAndDirty() {
        FolioState clean = new FolioState(FOLIO, SHIFT, false, false);
        FolioState inherited = new FolioState(FOLIO, SHIFT, true, true);

        assertThat(clean.isFullyUptodate()).isFalse();
        assertThat(clean.isAnyDirty()).isFalse();
        assertThat(inherited.isFullyUptodate()).isTrue();
        assertThat(inherited.nextCleanBlock(0, FOLIO)).isEqualTo(FOLIO);
    }

    @Test
    void settingARangeMarksEveryBlockItTouches() {
        FolioState state = new FolioState(FOLIO, SHIFT, false, false);

        boolean full = state.setRangeUptodate(BLOCK - 1, 2);
        state.setRangeDirty(BLOCK - 1, 2);

        assertThat(full).isFalse();
        assertThat(state.isRangeUptodate(0, 2 * BLOCK)).isTrue();
        assertThat(state.isBlockUptodate(2 * BLOCK)).isFalse();
        assertThat(state.nextDirtyBlock(0, FOLIO)).isZero();
        assertThat(state.nextCleanBlock(0, FOLIO)).isEqualTo(2 * BLOCK);
        assertThat(state.nextDirtyBlock(2 * BLOCK, FOLIO)).isEqualTo(-1);
    }

    @Test
    void combinedAndSeparateLockingLeaveTheSameBits() {
        for (StateLock mode : StateLock.values()) {
            FolioState state = new FolioState(FOLIO, SHIFT, false, false);
            boolean full = state.markWritten(mode, 3 * BLOCK, 2 * BLOCK, BLOCK + 1);

            assertThat(full).as(mode.name()).isFalse();
            assertThat(state.nextUptodateBlock(0, FOLIO)).as(mode.name()).isEqualTo(3 * BLOCK);
            assertThat(state.nextNotUptodateBlock(3 * BLOCK, FOLIO)).as(mode.name()).isEqualTo(5 * BLOCK);
            assertThat(state.nextDirtyBlock(0, FOLIO)).as(mode.name()).isEqualTo(3 * BLOCK);
            assertThat(state.nextCleanBlock(3 * BLOCK, FOLIO)).as(mode.name()).isEqualTo(5 * BLOCK);
        }
    }

    @Test
    void fullyUptodateOnceEveryBlockIs() {
        FolioState state = new FolioState(FOLIO, SHIFT, false, false);
        assertThat(state.setRangeUptodate(0, FOLIO - BLOCK)).isFalse();
        assertThat(state.setRangeUptodate(FOLIO - BLOCK, BLOCK)).isTrue();
        assertThat(state.isFullyUptodate()).isTrue();
    }

    @Test
    void searchesStopAtTheLimit() {
        FolioState state = new FolioState(FOLIO, SHIFT, true, false);
        state.setRangeDirty(10 * BLOCK, BLOCK);

        assertThat(state.nextDirtyBlock(0, 10 * BLOCK)).isEqualTo(-1);
        assertThat(state.nextDirtyBlock(0, 10 * BLOCK + 1)).isEqualTo(10 * BLOCK);
        assertThat(state.nextCleanBlock(10 * BLOCK, 10 * BLOCK + 1)).isEqualTo(11 * BLOCK);
    }

    @Test
    void largeFoliosSpanSeveralWords() {
        int blocks = 2048;
        FolioState state = new FolioState(blocks * BLOCK, SHIFT, false, false);
        state.setRangeDirty(1000 * BLOCK, 100 * BLOCK);

        assertThat(state.blockCount()).isEqualTo(blocks);
        assertThat(state.nextDirtyBlock(0, blocks * BLOCK)).isEqualTo(1000 * BLOCK);
        assertThat(state.nextCleanBlock(1000 * BLOCK, blocks * BLOCK)).isEqualTo(1100 * BLOCK);
        assertThat(state.isBlockUptodate(1000 * BLOCK)).isFalse();
    }
}
