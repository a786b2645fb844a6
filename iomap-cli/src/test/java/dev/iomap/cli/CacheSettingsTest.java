package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.StateLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CacheSettingsTest {

    private static PageCacheOptions options(String... assignments) throws UsageException {
        List<CacheSettings.Assignment> parsed = new ArrayList<>();
        for (String assignment : assignments) {
            parsed.add(CacheSettings.Assignment.parse(assignment));
        }
        return CacheSettings.options("4k", parsed);
    }

    @Test
    void everyPageCacheOptionCanBeSet() {
        PageCacheOptions defaults = PageCacheOptions.defaults();
        for (String key : CacheSettings.keys()) {
            var builder = defaults.toBuilder();
            String value = switch (key) {
                case "pageSize" -> "16k";
                case "maxFolioOrder" -> "2";
                case "stateLock" -> "separate";
                case "dirtyExpire", "writebackInterval" -> "1500ms";
                case "orderHints", "perBlockDirty", "poisonNewFolios" -> "off";
                default -> "512m";
            };
            org.assertj.core.api.Assertions.assertThatCode(() -> CacheSettings.apply(builder, key, value))
                    .as(key).doesNotThrowAnyException();
        }
    }

    @Test
    void valuesTakeFiosUnits() throws UsageException {
        PageCacheOptions options = options("pageSize=64k", "maxFolioOrder=0", "perBlockDirty=false",
                "stateLock=SEPARATE", "dirtyBackgroundBytes=8m", "dirtyLimitBytes=16m", "dirtyExpire=500ms",
                "writebackInterval=2", "maxIoendBytes=256k", "orderHints=0", "poisonNewFolios=true",
                "maxReadaheadBytes=512k");

        assertThat(options.pageSize()).isEqualTo(65536);
        assertThat(options.maxFolioOrder()).isZero();
        assertThat(options.perBlockDirty()).isFalse();
        assertThat(options.stateLock()).isEqualTo(StateLock.SEPARATE);
        assertThat(options.dirtyBackgroundBytes()).isEqualTo(8L << 20);
        assertThat(options.dirtyLimitBytes()).isEqualTo(16L << 20);
        assertThat(options.dirtyExpire()).isEqualTo(Duration.ofMillis(500));
        assertThat(options.writebackInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(options.maxIoendBytes()).isEqualTo(256 * 1024);
        assertThat(options.orderHints()).isFalse();
        assertThat(options.poisonNewFolios()).isTrue();
        assertThat(options.maxReadaheadBytes()).isEqualTo(512 * 1024);
    }

    @Test
    void anUnknownKeyListsTheValidOnes() {
        assertThatThrownBy(() -> options("perBlockDiry=false"))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("unknown --set key 'perBlockDiry'")
                .hasMessageContaining("perBlockDirty")
                .hasMessageContaining("maxFolioOrder")
                .hasMessageContaining("poisonNewFolios");
    }

    @Test
    void badValuesAndCombinationsAreUsageErrors() {
        assertThatThrownBy(() -> options("stateLock=SOMETIMES")).hasMessageContaining("bad value 'SOMETIMES'");
        assertThatThrownBy(() -> options("maxFolioOrder=99")).hasMessageContaining("out of range");
        assertThatThrownBy(() -> options("dirtyLimitBytes=1m")).hasMessageContaining("bad page-cache options");
        assertThatThrownBy(() -> options("noequals")).hasMessageContaining("write KEY=VALUE");
    }
}
