package dev.iomap.core.vfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileStat;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MappedFile;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.testkit.RecordingAdapter;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * {@code CoreFileSystem.touch}: a write or mapped store sets mtime and ctime through
 * {@code InodeOps.updateTimes} when it starts, not when the data is written back; an empty
 * write sets nothing; an explicit {@code setAttributes} restarts the once-a-millisecond interval, so
 * the next write sets the times again; without POSIX_ATTRIBUTES the core sets no times.
 */
class CoreTouchTest {
    private static final Instant SET = Instant.parse("2000-01-01T00:00:00.000000001Z");

    private final RamBlockDevice device = new RamBlockDevice(1024, 8L << 20);

    private IomapFileSystem mount(FileSystemAdapter adapter) throws IOException {
        adapter.format(device, FormatOptions.blockSize(1024));
        return CoreRuntime.mount(adapter, device, MountOptions.defaults());
    }

    private static void pause() throws InterruptedException {
        Thread.sleep(5);
    }

    @Test
    void aWriteSetsMtimeAndCtimeWhenItStartsAndWritebackLeavesThem() throws Exception {
        try (IomapFileSystem fs = mount(new SnapAdapter()); IomapFile file = fs.create("/f")) {
            FileStat created = fs.stat("/f");
            pause();
            Instant before = Instant.now();
            file.write(0, ByteBuffer.wrap(new byte[5000]));
            Instant after = Instant.now();
            FileStat written = fs.stat("/f");
            assertThat(written.mtime()).isBetween(before.truncatedTo(ChronoUnit.MILLIS), after);
            assertThat(written.ctime()).isEqualTo(written.mtime());
            assertThat(written.btime()).isEqualTo(created.btime());
            assertThat(written.atime()).isEqualTo(created.atime());
            pause();
            file.fsync();
            fs.sync();
            FileStat synced = fs.stat("/f");
            assertThat(synced.mtime()).isEqualTo(written.mtime());
            assertThat(synced.ctime()).isEqualTo(written.ctime());
        }
    }

    @Test
    void anEmptyWriteSetsNoTime() throws Exception {
        try (IomapFileSystem fs = mount(new SnapAdapter()); IomapFile file = fs.create("/f")) {
            FileStat created = fs.stat("/f");
            pause();
            assertThat(file.write(0, ByteBuffer.allocate(0))).isZero();
            assertThat(fs.stat("/f")).isEqualTo(created);
        }
    }

    @Test
    void setAttributesRestartsTheIntervalSoTheNextWriteSetsTheTimesAgain() throws Exception {
        try (IomapFileSystem fs = mount(new SnapAdapter()); IomapFile file = fs.create("/f")) {
            for (int round = 0; round < 20; round++) {
                file.write(round, ByteBuffer.wrap(new byte[] {1}));
                fs.setAttributes("/f", AttributeChange.none().withMtime(SET));
                Instant before = Instant.now();
                // Within a millisecond of the first write: skipped, were the interval not restarted.
                file.write(round, ByteBuffer.wrap(new byte[] {2}));
                assertThat(fs.stat("/f").mtime()).as("round %d", round)
                        .isAfterOrEqualTo(before.truncatedTo(ChronoUnit.MILLIS));
            }
        }
    }

    @Test
    void aMappedStoreSetsTheTimes() throws Exception {
        try (IomapFileSystem fs = mount(new SnapAdapter()); IomapFile file = fs.create("/f")) {
            file.truncate(4096);
            fs.setAttributes("/f", AttributeChange.none().withMtime(SET));
            MappedFile mapped = file.map();
            pause();
            Instant before = Instant.now();
            mapped.store(100, ByteBuffer.wrap(new byte[] {7}));
            FileStat stored = fs.stat("/f");
            assertThat(stored.mtime()).isBetween(before.truncatedTo(ChronoUnit.MILLIS), Instant.now());
            assertThat(stored.ctime()).isEqualTo(stored.mtime());
            mapped.load(0, ByteBuffer.allocate(200));
            assertThat(fs.stat("/f").mtime()).isEqualTo(stored.mtime());
        }
    }

    @Test
    void withoutPosixAttributesTheCoreSetsNoTimes() throws Exception {
        EnumSet<Capability> declared = EnumSet.copyOf(SnapAdapter.SUPPORTED);
        declared.remove(Capability.POSIX_ATTRIBUTES);
        // snapfs underneath keeps POSIX attributes and leaves the times to the core, which sets none.
        RecordingAdapter adapter = new RecordingAdapter(new SnapAdapter()).declaring(declared);
        try (IomapFileSystem fs = mount(adapter); IomapFile file = fs.create("/f")) {
            FileStat created = fs.stat("/f");
            pause();
            file.write(0, ByteBuffer.wrap(new byte[3000]));
            file.fsync();
            FileStat written = fs.stat("/f");
            assertThat(written.mtime()).isEqualTo(created.mtime());
            assertThat(written.ctime()).isEqualTo(created.ctime());
            assertThat(written.size()).isEqualTo(3000);
        }
    }
}
