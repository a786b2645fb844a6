package dev.iomap.adapter.zonefs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.BadAddressException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import dev.iomap.testkit.FaultingBuffer;
import dev.iomap.testkit.TestData;
import java.nio.ByteBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Writes whose source faults part way, on the two kinds of zonefs-like file: the kit's short-write
 * contract skips zonefs-like (its namespace is fixed, so the kit has no file of its own to write), and
 * these are its cases on the files the adapter has. A write keeps the bytes before the fault (at most
 * those; the engine may drop the folio the fault is in) and returns their count, or fails with
 * {@link BadAddressException} if it kept none; every byte it did not keep reads as before, in the cache
 * and after fsync and a remount. For a sequential file the size, which is the zone's write pointer, ends
 * at the bytes kept, and the next append goes on from there.
 *
 * <p>Zones of 256 KiB (sequential ones take 192 KiB) so that a fault on a {@link FaultingBuffer#PAGE}
 * boundary, portable to any host page size, falls inside a file.
 */
class ShortWriteTest {
    private static final long ZONE = 256 << 10;
    private static final ZoneLayout LAYOUT = new ZoneLayout(ZONE, 192 << 10, 6, 3, 3);
    private static final int FAULT = FaultingBuffer.PAGE;
    /** The cache's largest folio (page 4 KiB, order 4): a fault may cost the bytes of its folio before it. */
    private static final int MAX_FOLIO = 64 << 10;

    @ParameterizedTest(name = "block {0}")
    @ValueSource(ints = {1024, 4096})
    void aConventionalFileKeepsOnlyTheBytesBeforeTheFault(int blockSize) throws Exception {
        byte[] before = TestData.pattern(3, 0, (int) ZONE);
        int pos = 1000;
        byte[] data = TestData.pattern(11, pos, 2 * FAULT);
        byte[] expected;
        try (ZonedDevice device = newFormattedDevice(blockSize)) {
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/cnv/0")) {
                ZonefsFixture.write(file, 0, before);
                file.fsync();
                try (FaultingBuffer source = new FaultingBuffer(data, 0)) {
                    ByteBuffer src = source.buffer();
                    assertThatThrownBy(() -> file.write(pos, src)).isInstanceOf(BadAddressException.class);
                    assertThat(src.position()).isZero();
                }
                assertThat(ZonefsFixture.readAll(file)).as("a write that kept nothing changed nothing")
                        .isEqualTo(before);

                int kept;
                try (FaultingBuffer source = new FaultingBuffer(data, FAULT)) {
                    ByteBuffer src = source.buffer();
                    kept = file.write(pos, src);
                    assertThat(src.position()).isEqualTo(kept);
                }
                int faultInFile = pos + FAULT;
                int minKept = faultInFile / MAX_FOLIO * MAX_FOLIO - pos;
                assertThat(kept).as("bytes kept of a source faulting at byte %d", FAULT).isBetween(minKept, FAULT);
                expected = before.clone();
                System.arraycopy(data, 0, expected, pos, kept);
                assertThat(file.size()).as("a conventional file keeps its size").isEqualTo(ZONE);
                assertThat(ZonefsFixture.readAll(file)).as("in the cache").isEqualTo(expected);
                file.fsync();
            }
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/cnv/0")) {
                assertThat(ZonefsFixture.readAll(file)).as("after fsync and a remount").isEqualTo(expected);
            }
        }
    }

    @ParameterizedTest(name = "block {0}")
    @ValueSource(ints = {1024, 4096})
    void aSequentialFileEndsAtTheBytesKeptAndAppendsGoOnFromThere(int blockSize) throws Exception {
        int first = 4 * blockSize;
        byte[] head = TestData.pattern(5, 0, first);
        byte[] data = TestData.pattern(13, first, 2 * FAULT);
        byte[] tail = TestData.pattern(17, 0, 2 * blockSize);
        byte[] expected;
        try (ZonedDevice device = newFormattedDevice(blockSize)) {
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/0")) {
                ZonefsFixture.write(file, 0, head);
                try (FaultingBuffer source = new FaultingBuffer(data, 0)) {
                    ByteBuffer src = source.buffer();
                    assertThatThrownBy(() -> file.write(first, src)).isInstanceOf(BadAddressException.class);
                }
                assertThat(file.size()).as("an append that kept nothing moved nothing").isEqualTo(first);

                int kept;
                try (FaultingBuffer source = new FaultingBuffer(data, FAULT)) {
                    ByteBuffer src = source.buffer();
                    kept = file.write(first, src);
                    assertThat(src.position()).isEqualTo(kept);
                }
                int minKept = (first + FAULT) / MAX_FOLIO * MAX_FOLIO - first;
                assertThat(kept).as("bytes kept of a source faulting at byte %d", FAULT).isBetween(minKept, FAULT);
                assertThat(kept % blockSize).as("a sequential file grows by whole blocks").isZero();
                assertThat(file.size()).as("the write pointer ends at the bytes kept").isEqualTo(first + kept);

                ZonefsFixture.write(file, first + kept, tail);
                expected = new byte[first + kept + tail.length];
                System.arraycopy(head, 0, expected, 0, first);
                System.arraycopy(data, 0, expected, first, kept);
                System.arraycopy(tail, 0, expected, first + kept, tail.length);
                assertThat(ZonefsFixture.readAll(file)).as("in the cache").isEqualTo(expected);
                file.fsync();
                assertThat(device.zone(LAYOUT.conventionalZones()).writtenBytes())
                        .as("the zone's write pointer").isEqualTo(expected.length);
            }
            try (IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/0")) {
                assertThat(file.size()).isEqualTo(expected.length);
                assertThat(ZonefsFixture.readAll(file)).as("after fsync and a remount").isEqualTo(expected);
            }
        }
    }

    private static ZonedDevice newFormattedDevice(int blockSize) throws Exception {
        ZonedDevice device = ZonefsFixture.newDevice(LAYOUT);
        ZonefsFixture.format(device, blockSize);
        return device;
    }
}
