package dev.iomap.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AtomicWriteLimitsTest {
    private static final AtomicWriteLimits LIMITS = AtomicWriteLimits.of(4096, 65536);

    @Test
    void limitsAreNoneOrPowersOfTwoInOrderWithOneSegment() {
        assertThat(AtomicWriteLimits.NONE.supported()).isFalse();
        assertThat(LIMITS).isEqualTo(new AtomicWriteLimits(4096, 65536, 1));
        assertThat(LIMITS.supported()).isTrue();
        assertThatThrownBy(() -> AtomicWriteLimits.of(4096, 3 * 4096)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AtomicWriteLimits.of(8192, 4096)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AtomicWriteLimits(4096, 4096, 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AtomicWriteLimits(0, 4096, 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void eachRuleIsNamedInTheKernelsOrder() throws AtomicWriteException {
        expect(0, 3 * 4096, AtomicWriteLimits.Rule.LENGTH_NOT_POWER_OF_TWO,
                "w: length 12288 is not a power of two (LENGTH_NOT_POWER_OF_TWO, EINVAL)");
        expect(0, 0, AtomicWriteLimits.Rule.LENGTH_BELOW_UNIT_MIN,
                "w: length 0 is below the atomic write unit min 4096 (LENGTH_BELOW_UNIT_MIN, EINVAL)");
        expect(0, 3 * 65536, AtomicWriteLimits.Rule.LENGTH_ABOVE_UNIT_MAX,
                "w: length 196608 is above the atomic write unit max 65536 (LENGTH_ABOVE_UNIT_MAX, EINVAL)");
        expect(0, 2048, AtomicWriteLimits.Rule.LENGTH_BELOW_UNIT_MIN,
                "w: length 2048 is below the atomic write unit min 4096 (LENGTH_BELOW_UNIT_MIN, EINVAL)");
        expect(0, 131072, AtomicWriteLimits.Rule.LENGTH_ABOVE_UNIT_MAX,
                "w: length 131072 is above the atomic write unit max 65536 (LENGTH_ABOVE_UNIT_MAX, EINVAL)");
        expect(4096, 8192, AtomicWriteLimits.Rule.OFFSET_NOT_ALIGNED_TO_LENGTH,
                "w: offset 4096 is not a multiple of the length 8192 (OFFSET_NOT_ALIGNED_TO_LENGTH, EINVAL)");
        LIMITS.check("w", 16384, 16384);
        LIMITS.check("w", 0, 65536);
        assertThatThrownBy(() -> AtomicWriteLimits.NONE.check("w", 0, 4096))
                .isInstanceOfSatisfying(AtomicWriteException.class,
                        e -> assertThat(e.rule()).isEqualTo(AtomicWriteLimits.Rule.LENGTH_ABOVE_UNIT_MAX));
    }

    private static void expect(long pos, long length, AtomicWriteLimits.Rule rule, String message) {
        assertThatThrownBy(() -> LIMITS.check("w", pos, length)).isInstanceOf(InvalidRangeException.class)
                .hasMessage(message)
                .isInstanceOfSatisfying(AtomicWriteException.class, e -> assertThat(e.rule()).isEqualTo(rule));
    }
}
