package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The high-level API's -o options that mounts took before the low-level binding, and what they become. */
class HighLevelOptionsTest {

    @Test
    void timeoutsAndCachingBecomeTheCacheModeAndTheRestGoesToLibfuse() {
        var options = FuseMountOptions.defaults().withFuseOptions(List.of("allow_other,attr_timeout=0",
                "entry_timeout=2.5", "use_ino", "hard_remove,max_read=131072"));
        HighLevelOptions split = HighLevelOptions.of(options.fuseOptions());
        assertThat(split.libfuse()).containsExactly("allow_other", "max_read=131072");
        CacheMode cache = CacheMode.of(options, true);
        assertThat(cache.attributeTimeout()).isZero();
        assertThat(cache.entryTimeout()).isEqualTo(2.5);
        assertThat(cache.readCache()).isTrue();

        assertThat(CacheMode.of(FuseMountOptions.defaults().withFuseOptions(List.of("direct_io")), true).readCache())
                .isFalse();
        assertThat(CacheMode.of(FuseMountOptions.defaults().withDirectIo(false)
                .withFuseOptions(List.of("writeback_cache")), true).mode()).isEqualTo(CacheMode.Mode.WRITEBACK);
        assertThat(CacheMode.of(FuseMountOptions.defaults(), true).attributeTimeout()).isEqualTo(1.0);
        assertThat(CacheMode.of(FuseMountOptions.defaults().withSharedImage(true)
                .withFuseOptions(List.of("attr_timeout=5")), true).attributeTimeout()).isZero();
    }

    @Test
    void aTimeoutThatIsNoNumberOfSecondsIsRefused() {
        assertThatThrownBy(() -> HighLevelOptions.of(List.of("attr_timeout=soon")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("attr_timeout=soon");
        assertThatThrownBy(() -> HighLevelOptions.of(List.of("entry_timeout=-1")))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
