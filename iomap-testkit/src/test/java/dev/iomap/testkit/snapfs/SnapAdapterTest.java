package dev.iomap.testkit.snapfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.FormatOptions;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What snapfs promises without an engine: its declaration, format and fsck (the kit covers the rest). */
class SnapAdapterTest {

    @Test
    void declaresWhatItIsGivenAndRefusesWhatItCannotHonour() {
        assertThat(new SnapAdapter().capabilities()).isEqualTo(SnapAdapter.SUPPORTED);
        assertThat(new SnapAdapter(Set.of(Capability.TRUNCATE)).capabilities()).containsExactly(Capability.TRUNCATE);
        assertThat(new SnapAdapter(Set.of()).capabilities()).isEmpty();
        assertThat(SnapAdapter.without(Capability.DURABLE_FSYNC, Capability.DIRECTORIES).capabilities())
                .hasSize(SnapAdapter.SUPPORTED.size() - 2).doesNotContain(Capability.DURABLE_FSYNC);
        assertThatThrownBy(() -> new SnapAdapter(EnumSet.of(Capability.TRUNCATE, Capability.CLONE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CLONE");
    }

    @Test
    void aFreshImageIsCleanAndAGarbageSuperblockIsReportedNotThrown() throws IOException {
        SnapAdapter adapter = new SnapAdapter();
        RamBlockDevice device = new RamBlockDevice(512, 8L << 20);
        adapter.format(device, FormatOptions.blockSize(4096));
        assertThat(adapter.fsck(device).problems()).isEmpty();

        device.write(0, ByteBuffer.wrap("garbage!".repeat(64).getBytes(StandardCharsets.US_ASCII)), IoPurpose.METADATA).join();

        assertThat(adapter.fsck(device).problems()).singleElement().asString()
                .contains("no superblock magic at device offset 0");
    }
}
