package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.devices.RamBlockDevice;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Format properties are checked before anything is written, kept in the config key, and probed back. */
class FormatOptionsTest {

    private static FormatOptions options(Map<String, String> properties) {
        return new FormatOptions(4096, "t", properties);
    }

    @Test
    void badPropertiesAreRefusedWithTheirName() {
        assertThatThrownBy(() -> Config.parse(options(Map.of("journals", "2"))))
                .isInstanceOf(InvalidRangeException.class).hasMessageContaining("'journals' is unknown");
        assertThatThrownBy(() -> Config.parse(options(Map.of("checksum", "md5"))))
                .hasMessage("bcachefs-like checksum=md5: use crc32c, xxhash64 or none");
        assertThatThrownBy(() -> Config.parse(options(Map.of("compression", "gzip"))))
                .hasMessage("bcachefs-like compression=gzip: use none, lz4 or zstd");
        assertThatThrownBy(() -> Config.parse(options(Map.of("extentmax", "5000"))))
                .hasMessage("bcachefs-like extentmax=5000 is not a multiple of the block size 4096");
        assertThatThrownBy(() -> Config.parse(options(Map.of("nocow", "true", "compression", "lz4"))))
                .hasMessage("bcachefs-like nocow=true cannot compress (data is overwritten in place)");
        assertThatThrownBy(() -> Images.ADAPTER.checkFormat(1024, 1 << 20, options(Map.of())))
                .hasMessage("bcachefs-like: the device's block size 1024 is not the filesystem's 4096");
    }

    /**
     * Issue 36, item 7: what the store refuses (a device too small for its journal, a journal under 64
     * blocks, blocks under 1 KiB) is refused by checkFormat, without a device, so that mkfs refuses it
     * before it touches the image.
     */
    @Test
    void checkFormatRefusesWhatTheStoreRefusesWithoutADevice() {
        assertThatThrownBy(() -> Images.ADAPTER.checkFormat(4096, 100 << 10, options(Map.of())))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("bcachefs-like: device of 25 blocks is too small for a journal of 64 blocks");
        assertThatThrownBy(() -> Images.ADAPTER.checkFormat(4096, 16 << 20, options(Map.of("journalblocks", "10"))))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("bcachefs-like: a journal needs at least 64 blocks, got 10");
        assertThatThrownBy(() -> Images.ADAPTER.checkFormat(4096, 16 << 20,
                options(Map.of("journalblocks", "100000")))).isInstanceOf(InvalidRangeException.class)
                .hasMessage("bcachefs-like: device of 4096 blocks is too small for a journal of 100000 blocks");
        assertThatThrownBy(() -> Images.ADAPTER.checkFormat(512, 16 << 20, new FormatOptions(512, "", Map.of())))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("bcachefs-like: B-tree nodes need blocks of at least 1024 bytes, the device has 512");
    }

    @Test
    void theConfigRoundTripsAndProbeReportsTheBlockSize() throws Exception {
        Config config = Config.parse(options(Map.of("checksum", "xxhash64", "compression", "zstd",
                "extentmax", "131072", "journalblocks", "128")));
        assertThat(Config.decode(config.encode())).isEqualTo(config);
        assertThat(config).isEqualTo(new Config(Codecs.CSUM_XXHASH64, Codecs.COMPRESS_ZSTD, 131072, false, 128));
        RamBlockDevice device = new RamBlockDevice(4096, 8L << 20);
        assertThat(Images.ADAPTER.probeFormat(device)).isEmpty();
        Images.format(device, Map.of("journalblocks", "128"));
        assertThat(Images.ADAPTER.probeFormat(device))
                .isEqualTo(Optional.of(dev.iomap.spi.ProbedFormat.of("bcachefs-like", 4096)));
        assertThat(Images.ADAPTER.fsck(device).problems()).isEmpty();
    }
}
