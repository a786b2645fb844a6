package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.trace.ChecksumErrorEvent;
import dev.iomap.spi.trace.FolioReservationEvent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bcachefs-like's trace events (issue 41 item 1): a write's space reservation, and a data extent that fails
 * its checksum on read, with what the error message says.
 */
class BcachefsTraceEventsTest {
    @TempDir
    Path dir;

    @Test
    void aWriteReservesItsBlocksAndABadExtentReportsItsChecksums() throws Exception {
        RamBlockDevice device = new RamBlockDevice(4096, 32L << 20);
        Images.format(device, Map.of("checksum", "crc32c", "compression", "none"));
        Path file = dir.resolve("bcachefs.jfr");
        long ino;
        try (Recording recording = new Recording()) {
            recording.enable(FolioReservationEvent.NAME);
            recording.enable(ChecksumErrorEvent.NAME);
            recording.start();
            try (IomapFileSystem fs = Images.mount(device); IomapFile f = fs.create("/f")) {
                f.write(0, ByteBuffer.allocate(16384));
                f.fsync();
                ino = fs.stat("/f").ino();
            }
            BcachefsVolume.Extent extent = Images.extents(device).getFirst();
            long at = extent.value().devStart() * 4096;
            device.poke(at, new byte[] {(byte) (device.peek(at, 1)[0] ^ 1)}, 0, 1);
            MountOptions noReadahead = MountOptions.of(PageCacheOptions.builder().maxReadaheadBytes(0).build());
            try (IomapFileSystem fs = CoreRuntime.mount(Images.ADAPTER, device, noReadahead);
                    IomapFile f = fs.open("/f")) {
                assertThatThrownBy(() -> f.read(0, ByteBuffer.allocate(1))).isInstanceOf(IOException.class);
            }
            recording.stop();
            recording.dump(file);
        }

        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals(FolioReservationEvent.NAME))
                .extracting(e -> e.getLong("inode") + " " + e.getLong("block") + "+" + e.getLong("blocks") + " covered "
                        + e.getLong("covered") + " new " + e.getLong("reserved"))
                .containsExactly(ino + " 0+4 covered 4 new 4");
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals(ChecksumErrorEvent.NAME)).singleElement()
                .satisfies(e -> {
                    assertThat(e.getLong("inode")).isEqualTo(ino);
                    assertThat(e.getLong("offset")).isZero();
                    assertThat(e.getString("checksumType")).isEqualTo("crc32c");
                    assertThat(e.getLong("expected")).isNotEqualTo(e.getLong("got"));
                });
    }
}
