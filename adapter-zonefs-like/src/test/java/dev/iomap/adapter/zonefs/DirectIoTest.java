package dev.iomap.adapter.zonefs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OpenFlag;
import dev.iomap.device.DeviceStats;
import dev.iomap.devices.ZonedDevice;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Direct I/O on zone files, as zonefs does it in the kernel: a sequential file takes direct appends
 * at its write pointer (interleaved with buffered appends, which are written back first), refuses a
 * direct write that is not an append (EINVAL) and an unaligned one; a conventional file is read and
 * overwritten in place.
 */
class DirectIoTest {
    private static final Set<OpenFlag> DIRECT = EnumSet.of(OpenFlag.DIRECT);
    private final Random random = new Random(ZonefsFixture.SEED);

    @ParameterizedTest(name = "block {0}")
    @ValueSource(ints = {1024, 4096})
    void directAppendsGoToTheWritePointerBesideBufferedOnes(int blockSize) throws Exception {
        var expected = new ByteArrayOutputStream();
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(blockSize)) {
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile buffered = fs.open("/seq/1");
                    IomapFile direct = fs.open("/seq/1", DIRECT)) {
                byte[] first = ZonefsFixture.randomBytes(random, 3 * blockSize);
                ZonefsFixture.write(buffered, 0, first);                     // cached, not written back
                expected.writeBytes(first);
                byte[] second = ZonefsFixture.randomBytes(random, 2 * blockSize);
                DeviceStats before = device.stats();
                ZonefsFixture.write(direct, direct.size(), second);
                expected.writeBytes(second);
                DeviceStats done = device.stats().minus(before);
                assertThat(done.dataBytesWritten()).as("the buffered blocks, then the direct ones")
                        .isEqualTo(5L * blockSize);
                Zone4 zone = new Zone4(device);
                assertThat(zone.written()).as("the write pointer after the direct append").isEqualTo(5L * blockSize);
                assertThat(direct.size()).isEqualTo(5L * blockSize);
                byte[] third = ZonefsFixture.randomBytes(random, blockSize);
                ZonefsFixture.write(buffered, buffered.size(), third);
                expected.writeBytes(third);
                ByteBuffer all = ByteBuffer.allocate(8 * blockSize);
                assertThat(direct.read(0, all)).isEqualTo(6 * blockSize);
                assertThat(Arrays.copyOf(all.array(), 6 * blockSize)).isEqualTo(expected.toByteArray());
                assertThat(ZonefsFixture.readAll(buffered)).isEqualTo(expected.toByteArray());
            }
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/1")) {
                assertThat(ZonefsFixture.readAll(file)).isEqualTo(expected.toByteArray());
            }
        }
    }

    @ParameterizedTest(name = "block {0}")
    @ValueSource(ints = {1024, 4096})
    void aDirectWriteThatIsNotAnAppendIsRefused(int blockSize) throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(blockSize);
                IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile direct = fs.open("/seq/1", DIRECT)) {
            ZonefsFixture.write(direct, 0, ZonefsFixture.randomBytes(random, 2 * blockSize));
            assertThatThrownBy(() -> direct.write(0, ByteBuffer.allocate(blockSize)))
                    .isInstanceOf(NotSupportedException.class)
                    .extracting(e -> ((NotSupportedException) e).refusal())
                    .isEqualTo(NotSupportedException.Refusal.INVALID_ARGUMENT);
            assertThatThrownBy(() -> direct.write(4L * blockSize, ByteBuffer.allocate(blockSize)))
                    .isInstanceOf(NotSupportedException.class);
            assertThatThrownBy(() -> direct.write(2L * blockSize, ByteBuffer.allocate(blockSize / 2)))
                    .isInstanceOf(InvalidRangeException.class);
            assertThat(direct.size()).isEqualTo(2L * blockSize);
            assertThat(new Zone4(device).written()).isEqualTo(2L * blockSize);
        }
    }

    @ParameterizedTest(name = "block {0}")
    @ValueSource(ints = {1024, 4096})
    void aConventionalFileIsOverwrittenInPlace(int blockSize) throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(blockSize)) {
            byte[] data = ZonefsFixture.randomBytes(random, 4 * blockSize);
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile direct = fs.open("/cnv/0", DIRECT);
                    IomapFile buffered = fs.open("/cnv/0")) {
                assertThat(ZonefsFixture.read(buffered, blockSize, blockSize)).containsOnly(0);  // cached
                DeviceStats before = device.stats();
                ZonefsFixture.write(direct, blockSize, data);
                assertThat(device.stats().minus(before).dataBytesWritten()).isEqualTo(4L * blockSize);
                assertThat(ZonefsFixture.read(buffered, blockSize, 4 * blockSize)).isEqualTo(data);
                ByteBuffer back = ByteBuffer.allocate(4 * blockSize);
                assertThat(direct.read(blockSize, back)).isEqualTo(4 * blockSize);
                assertThat(back.array()).isEqualTo(data);
            }
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/cnv/0")) {
                assertThat(ZonefsFixture.read(file, blockSize, 4 * blockSize)).isEqualTo(data);
            }
        }
    }

    /** The zone of /seq/1 (see {@link SequentialFileTest#ZONE_INDEX}). */
    private record Zone4(ZonedDevice device) {
        long written() throws java.io.IOException {
            return device.zone(SequentialFileTest.ZONE_INDEX).writtenBytes();
        }
    }
}
