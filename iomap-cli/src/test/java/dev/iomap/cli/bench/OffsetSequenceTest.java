package dev.iomap.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class OffsetSequenceTest {

    private static List<Long> take(OffsetSequence sequence, int count) {
        List<Long> offsets = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            offsets.add(sequence.next());
        }
        return offsets;
    }

    @Test
    void sequentialVisitsEveryWholeBlockThenStartsAgain() {
        OffsetSequence sequence = OffsetSequence.of(10_000, 4096, false, new SplittableRandom(1));

        assertThat(take(sequence, 5)).containsExactly(0L, 4096L, 0L, 4096L, 0L);
    }

    @Test
    void randomVisitsEveryBlockOncePerRoundInAnotherOrderEachRound() {
        for (long blocks : new long[] {1, 2, 3, 5, 64, 1000, 4097}) {
            OffsetSequence sequence = OffsetSequence.of(blocks * 512, 512, true, new SplittableRandom(blocks));
            List<Long> first = take(sequence, (int) blocks);
            List<Long> second = take(sequence, (int) blocks);

            assertThat(new HashSet<>(first)).as("%d blocks", blocks).hasSize((int) blocks);
            assertThat(first).allSatisfy(offset -> assertThat(offset % 512).isZero())
                    .allSatisfy(offset -> assertThat(offset).isBetween(0L, (blocks - 1) * 512));
            assertThat(new HashSet<>(second)).isEqualTo(new HashSet<>(first));
            if (blocks >= 64) {
                assertThat(second).isNotEqualTo(first);
                assertThat(first).isNotEqualTo(first.stream().sorted().toList());
            }
        }
    }

    @Test
    void theSameSeedGivesTheSameOrder() {
        List<Long> one = take(OffsetSequence.of(1 << 20, 4096, true, new SplittableRandom(42)), 256);
        List<Long> two = take(OffsetSequence.of(1 << 20, 4096, true, new SplittableRandom(42)), 256);

        assertThat(one).isEqualTo(two);
    }
}
