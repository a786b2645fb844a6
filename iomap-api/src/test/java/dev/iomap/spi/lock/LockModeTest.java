package dev.iomap.spi.lock;

import static dev.iomap.spi.lock.LockMode.DF;
import static dev.iomap.spi.lock.LockMode.EX;
import static dev.iomap.spi.lock.LockMode.SH;
import static dev.iomap.spi.lock.LockMode.UN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LockModeTest {

    /** GFS2/DLM: UN (NL) with all, SH (PR) with SH, DF (CW) with DF, EX with UN only. */
    private static final Map<LockMode, Set<LockMode>> COMPATIBLE = Map.of(
            UN, Set.of(UN, SH, DF, EX),
            SH, Set.of(UN, SH),
            DF, Set.of(UN, DF),
            EX, Set.of(UN));

    @Test
    void compatibilityMatrixIsGfs2sForEveryPairAndSymmetric() {
        for (LockMode held : LockMode.values()) {
            for (LockMode wanted : LockMode.values()) {
                assertThat(held.compatibleWith(wanted)).as(held + " with " + wanted)
                        .isEqualTo(COMPATIBLE.get(held).contains(wanted));
                assertThat(held.compatibleWith(wanted)).as("symmetric " + held + "/" + wanted)
                        .isEqualTo(wanted.compatibleWith(held));
            }
        }
    }

    @Test
    void exclusiveCoversEveryUseAndOthersOnlyThemselvesAndUnlocked() {
        Map<LockMode, Set<LockMode>> covers = Map.of(
                UN, Set.of(UN),
                SH, Set.of(UN, SH),
                DF, Set.of(UN, DF),
                EX, Set.of(UN, SH, DF, EX));
        for (LockMode has : LockMode.values()) {
            for (LockMode wanted : LockMode.values()) {
                assertThat(has.covers(wanted)).as(has + " covers " + wanted)
                        .isEqualTo(covers.get(has).contains(wanted));
            }
        }
    }

    @Test
    void onlySharedAndExclusiveCacheAndOnlyExclusiveKeepsDirtyData() {
        assertThat(List.of(LockMode.values()).stream().filter(LockMode::allowsCaching)).containsExactly(SH, EX);
        assertThat(List.of(LockMode.values()).stream().filter(LockMode::allowsDirty)).containsExactly(EX);
    }

    @Test
    void namesSortInTheLockOrderRenameInodesByNumberThenRgrps() {
        List<LockName> expected = List.of(LockName.rename(), LockName.inode(0), LockName.inode(2),
                LockName.inode(Long.MAX_VALUE), LockName.rgrp(0), LockName.rgrp(7));
        List<LockName> shuffled = new ArrayList<>(expected);
        Collections.shuffle(shuffled, new Random(14));

        Collections.sort(shuffled);

        assertThat(shuffled).containsExactlyElementsOf(expected);
        assertThat(LockName.inode(3)).isEqualTo(new LockName(LockType.INODE, 3));
        assertThat(LockName.inode(3).toString()).isEqualTo("INODE:3");
    }

    @Test
    void aNegativeNumberOrMissingTypeIsRefused() {
        assertThatThrownBy(() -> LockName.inode(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> new LockName(null, 1)).isInstanceOf(NullPointerException.class);
    }
}
