package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Operations on files far larger than the journal (3 MiB files, a 64-block journal of 1 KiB blocks)
 * are split into transactions the log holds: they succeed, the bytes match a model, fsck is clean, and
 * the mount keeps working afterwards. Both data modes: ordered, and every file's data journaled.
 */
class BigTransactionTest {
    static final int BLOCK = 1024;
    static final int BIG = 3 << 20;

    /** @param data the {@code data=} mount option: {@code ordered} or {@code journal} */
    static AdapterFixture smallJournal(String data, String journalBlocks) {
        return AdapterFixture.of(new Gfs2LikeAdapter(), new Geometry(BLOCK, 4096, 0))
                .withDeviceBlockSizeOfFilesystem()
                .withDeviceBytes(16L << 20)
                .withFormatProperties(Map.of("journalblocks", journalBlocks))
                .withMounter((adapter, device, options) -> IomapFileSystems.mount(adapter.name(), device,
                        options.withAdapterOptions(Map.of("data", data))));
    }

    static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (seed * 37 + i * 7 + (i >> 10));
        }
        return bytes;
    }

    static byte[] readAll(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            ByteBuffer buffer = ByteBuffer.allocate((int) file.size());
            while (buffer.hasRemaining() && file.read(buffer.position(), buffer) > 0) {
                // keep reading
            }
            return buffer.array();
        }
    }

    static void write(IomapFileSystem fs, String path, long at, byte[] data) throws IOException {
        try (IomapFile file = fs.open(path)) {
            file.write(at, ByteBuffer.wrap(data));
        }
    }

    /** Runs {@code body} on a fresh mount, then checks fsck and that a remount shows {@code expected} at /f. */
    private static void check(AdapterFixture fixture, Body body) throws IOException {
        RamBlockDevice device = fixture.newFormattedDevice();
        byte[] expected;
        try (IomapFileSystem fs = fixture.mount(device)) {
            expected = body.run(fs);
            fs.create("/after").close();
            write(fs, "/after", 0, pattern(9, 3 * BLOCK));
        }
        assertThat(fixture.fsck(device).problems()).isEmpty();
        try (IomapFileSystem fs = fixture.mount(device)) {
            if (expected != null) {
                assertThat(readAll(fs, "/f")).isEqualTo(expected);
            }
            assertThat(readAll(fs, "/after")).isEqualTo(pattern(9, 3 * BLOCK));
        }
    }

    /** A change on a mount; returns the bytes /f must hold, or null if /f must not exist. */
    @FunctionalInterface
    interface Body {
        byte[] run(IomapFileSystem fs) throws IOException;
    }

    @ParameterizedTest(name = "data={0}")
    @ValueSource(strings = {"ordered", "journal"})
    void aFallocateOfManyTimesTheJournalSucceeds(String data) throws IOException {
        check(smallJournal(data, "64"), fs -> {
            fs.create("/f").close();
            byte[] head = pattern(1, 5000);
            write(fs, "/f", 0, head);
            byte[] model = new byte[BIG];
            System.arraycopy(head, 0, model, 0, head.length);
            try (IomapFile file = fs.open("/f")) {
                file.fallocate(FallocateMode.ALLOCATE, 0, BIG, false);
            }
            byte[] middle = pattern(2, 3 * BLOCK + 17);
            write(fs, "/f", BIG / 2 + 5, middle);
            System.arraycopy(middle, 0, model, BIG / 2 + 5, middle.length);
            assertThat(readAll(fs, "/f")).isEqualTo(model);
            return model;
        });
    }

    @ParameterizedTest(name = "data={0}")
    @ValueSource(strings = {"ordered", "journal"})
    void aTruncateAndAPunchOfManyTimesTheJournalSucceed(String data) throws IOException {
        check(smallJournal(data, "64"), fs -> {
            fs.create("/f").close();
            byte[] model = pattern(3, BIG);
            write(fs, "/f", 0, model);
            fs.sync();
            try (IomapFile file = fs.open("/f")) {
                file.fallocate(FallocateMode.PUNCH_HOLE, 100_000, 1_000_000, true);
                Arrays.fill(model, 100_000, 1_100_000, (byte) 0);
                file.truncate(1_300_000 + 11);
            }
            byte[] cut = Arrays.copyOf(model, 1_300_000 + 11);
            assertThat(readAll(fs, "/f")).isEqualTo(cut);
            return cut;
        });
    }

    @ParameterizedTest(name = "data={0}")
    @ValueSource(strings = {"ordered", "journal"})
    void anUnlinkOfAFileOfManyTimesTheJournalFreesEveryBlock(String data) throws IOException {
        AdapterFixture fixture = smallJournal(data, "64");
        check(fixture, fs -> {
            long free = fs.statfs().freeBlocks();
            fs.create("/f").close();
            write(fs, "/f", 0, pattern(4, BIG));
            fs.sync();
            assertThat(fs.statfs().freeBlocks()).isLessThan(free - BIG / BLOCK);
            fs.unlink("/f");
            fs.sync();
            assertThat(fs.statfs().freeBlocks()).isEqualTo(free);
            return null;
        });
    }
}
