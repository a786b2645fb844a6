package dev.iomap.cli.report;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The expected strings are from real fio 3.33 output of the same numbers. */
class FioFormatTest {

    @Test
    void num2strMatchesFio() {
        assertThat(FioFormat.num2str(9142, 4, false, "")).isEqualTo("9142");
        assertThat(FioFormat.num2str(15_333, 4, false, "")).isEqualTo("15.3k");
        assertThat(FioFormat.num2str(37_449_142, 4, true, "B/s")).isEqualTo("35.7MiB/s");
        assertThat(FioFormat.num2str(37_449_142, 4, false, "B/s")).isEqualTo("37.4MB/s");
        assertThat(FioFormat.num2str(524_288, 4, true, "B")).isEqualTo("512KiB");
        assertThat(FioFormat.num2str(524_288, 4, false, "B")).isEqualTo("524kB");
        assertThat(FioFormat.num2str(4096, 4, true, "B")).isEqualTo("4096B");
        assertThat(FioFormat.num2str(131_072, 4, true, "B")).isEqualTo("128KiB");
        assertThat(FioFormat.num2str(0, 4, true, "B")).isEqualTo("0B");
    }

    @Test
    void aFractionThatRoundsUpCarriesIntoTheNumber() {
        assertThat(FioFormat.num2str(35_999, 4, false, "")).isEqualTo("36.0k");
    }
}
