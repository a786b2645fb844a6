package dev.iomap.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.DeviceStats;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MountOptionsTest {

    @Test
    void parsesKeyValuePairsAndBareFlags() {
        assertThat(MountOptions.parseAdapterOptions("data=journal,spectator,journal=2"))
                .containsExactly(Map.entry("data", "journal"), Map.entry("spectator", ""), Map.entry("journal", "2"));
        assertThat(MountOptions.parseAdapterOptions("")).isEmpty();
        assertThat(MountOptions.parseAdapterOptions("a=b=c")).containsExactly(Map.entry("a", "b=c"));
    }

    @Test
    void refusesEmptyAndRepeatedKeys() {
        assertThatThrownBy(() -> MountOptions.parseAdapterOptions("a,,b"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without a name");
        assertThatThrownBy(() -> MountOptions.parseAdapterOptions("a=1,a=2"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'a' given twice");
    }

    @Test
    void anAdapterRefusesTheFirstUnknownKeyInSortedOrder() throws IomapException {
        MountOptions options = MountOptions.defaults().withAdapterOptions(Map.of("zeta", "", "data", "journal"));
        options.checkAdapterOptions("gfs2-like", Set.of("data", "zeta"));
        assertThat(options.adapterOption("data")).contains("journal");
        assertThat(options.adapterOption("absent")).isEmpty();
        assertThatThrownBy(() -> options.checkAdapterOptions("gfs2-like", Set.of("data")))
                .isInstanceOf(IomapException.class)
                .hasMessage("gfs2-like: unknown mount option 'zeta' (known: [data])");
        assertThatThrownBy(() -> options.checkAdapterOptions("xfs-like", Set.of()))
                .hasMessage("xfs-like: unknown mount option 'data' (it takes none)");
        assertThat(MountOptions.defaults().adapterOptions()).isEmpty();
    }

    @Test
    void statsCarryTheAdapterCountersSortedAndDefaultToZero() {
        IoStats stats = new IoStats(1, 2, DeviceStats.ZERO, 3, 4, 5, new long[] {6})
                .withAdapterCounters(Map.of("glock.demotions", 2L, "glock.acquisitions", 7L));
        assertThat(stats.adapterCounters().keySet()).containsExactly("glock.acquisitions", "glock.demotions");
        assertThat(stats.adapterCounter("glock.acquisitions")).isEqualTo(7);
        assertThat(stats.adapterCounter("absent")).isZero();
        assertThat(stats).isNotEqualTo(new IoStats(1, 2, DeviceStats.ZERO, 3, 4, 5, new long[] {6}));
        assertThat(stats.toString()).contains("adapterCounters={glock.acquisitions=7, glock.demotions=2}");
    }
}
