package dev.iomap.adapter.zonefs;

import static dev.iomap.adapter.zonefs.ZonefsFixture.ZONE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MappedFile;
import dev.iomap.api.NotSupportedException;
import dev.iomap.devices.ZonedDevice;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Conventional zone files: fixed size, full buffered I/O through the iomap path. */
class ConventionalFileTest {
    private final Random random = new Random(ZonefsFixture.SEED);

    @ParameterizedTest(name = "block {0}")
    @ValueSource(ints = {1024, 4096})
    void overwritesAnywhereAndReadsBackAfterRemount(int blockSize) throws Exception {
        byte[] expected = new byte[(int) ZONE];
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(blockSize)) {
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/cnv/1")) {
                assertThat(file.size()).isEqualTo(ZONE);
                for (int i = 0; i < 40; i++) {
                    int pos = random.nextInt((int) ZONE - 1);
                    int length = 1 + random.nextInt(Math.min(9000, (int) ZONE - pos));
                    byte[] data = ZonefsFixture.randomBytes(random, length);
                    ZonefsFixture.write(file, pos, data);
                    System.arraycopy(data, 0, expected, pos, data.length);
                    if (i % 10 == 9) {
                        file.fsync();
                    }
                }
                assertThat(ZonefsFixture.readAll(file)).isEqualTo(expected);
                assertThat(file.size()).isEqualTo(ZONE);
            }
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/cnv/1")) {
                assertThat(ZonefsFixture.readAll(file)).isEqualTo(expected);
            }
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile other = fs.open("/cnv/0")) {
                assertThat(ZonefsFixture.readAll(other)).containsOnly(0);
            }
        }
    }

    @ParameterizedTest(name = "block {0}")
    @ValueSource(ints = {1024, 4096})
    void mappedWritesReachTheZone(int blockSize) throws Exception {
        byte[] data = ZonefsFixture.randomBytes(random, 6000);
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(blockSize)) {
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/cnv/0")) {
                MappedFile map = file.map();
                map.store(10_000, ByteBuffer.wrap(data));
                file.fsync();
            }
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/cnv/0")) {
                assertThat(ZonefsFixture.read(file, 10_000, data.length)).isEqualTo(data);
                assertThat(ZonefsFixture.read(file, 0, 10_000)).containsOnly(0);
            }
            // Zone 1 is /cnv/0: the data sits at the same offset in the zone.
            ByteBuffer raw = ByteBuffer.allocate(14 * 512);
            device.read(ZONE + 19 * 512, raw);
            assertThat(Arrays.copyOfRange(raw.array(), 10_000 - 19 * 512, 10_000 - 19 * 512 + data.length))
                    .isEqualTo(data);
        }
    }

    /** The declared-unsupported operations, and the sizes a conventional file refuses, each proved. */
    @ParameterizedTest(name = "block {0}")
    @ValueSource(ints = {4096})
    void refusesWhatAFixedSizeFileCannotDo(int blockSize) throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(blockSize);
                IomapFileSystem fs = ZonefsFixture.mount(device);
                IomapFile file = fs.open("/cnv/0");
                IomapFile other = fs.open("/cnv/1")) {
            ZonefsFixture.write(file, 0, new byte[] {1, 2, 3});

            assertThatThrownBy(() -> file.write(ZONE - 2, ByteBuffer.allocate(4)))
                    .isInstanceOf(InvalidRangeException.class);
            assertThatThrownBy(() -> file.truncate(0)).isInstanceOf(NotSupportedException.class)
                    .hasMessageContaining("fixed size " + ZONE);
            assertThatThrownBy(() -> file.truncate(ZONE / 2)).isInstanceOf(NotSupportedException.class);
            file.truncate(ZONE);
            for (FallocateMode mode : FallocateMode.values()) {
                assertThatThrownBy(() -> file.fallocate(mode, 0, 4096, true)).isInstanceOf(NotSupportedException.class);
            }
            assertThatThrownBy(() -> other.cloneRange(file, 0, 0, 4096)).isInstanceOf(NotSupportedException.class)
                    .hasMessageContaining("CLONE");
            assertThatThrownBy(() -> file.unshare(0, 4096)).isInstanceOf(NotSupportedException.class);

            assertThat(file.size()).isEqualTo(ZONE);
            assertThat(ZonefsFixture.read(file, 0, 3)).containsExactly(1, 2, 3);
        }
    }
}
