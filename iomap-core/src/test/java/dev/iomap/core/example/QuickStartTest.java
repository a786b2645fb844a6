package dev.iomap.core.example;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.core.example.QuickStart.Result;
import org.junit.jupiter.api.Test;

class QuickStartTest {
    private static final long APP_BYTES = (long) QuickStart.BLOCKS * QuickStart.BLOCK_SIZE;

    @Test
    void perBlockDirtyWritesOnlyTheDirtyBlocks() throws Exception {
        Result result = QuickStart.run(true);

        assertThat(result.appBytes()).isEqualTo(256 * 4096);
        assertThat(result.deviceBytes()).isEqualTo(APP_BYTES);
        assertThat(result.stats().writeAmplification()).isEqualTo(1.0);
        assertThat(result.verifiedBlocks()).isEqualTo(256);
        assertThat(result.mismatches()).isEmpty();
    }

    @Test
    void withoutPerBlockDirtyEveryWriteCostsAWholeFolio() throws Exception {
        Result result = QuickStart.run(false);

        assertThat(result.appBytes()).isEqualTo(256 * 4096);
        assertThat(result.deviceBytes()).isEqualTo(16 * APP_BYTES);
        assertThat(result.stats().writeAmplification()).isEqualTo(16.0);
        assertThat(result.verifiedBlocks()).isEqualTo(256);
        assertThat(result.mismatches()).isEmpty();
    }
}
