package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.api.NoSpaceException;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Space is reserved by write(): ENOSPC comes from the write, and what a write accepted reaches the device. */
class NoSpaceTest {

    @ParameterizedTest(name = "block {0}")
    @ValueSource(ints = {1024, 4096})
    void fillingTheDeviceFailsWriteWithEnospcAndEveryAcceptedByteIsOnTheDeviceAfterFsync(int blockSize)
            throws IOException {
        RamBlockDevice device = new RamBlockDevice(blockSize, 4L << 20);
        Images.format(device, Map.of());
        List<byte[]> accepted = new ArrayList<>();
        int chunk = 3 * blockSize + 100;
        NoSpaceException refused = null;
        try (IomapFileSystem fs = Images.mount(device)) {
            outer:
            for (int file = 0; file < 64; file++) {
                try (IomapFile f = fs.create("/f" + file)) {
                    ByteArrayBuilder content = new ByteArrayBuilder();
                    for (int i = 0; i < 40; i++) {
                        ByteBuffer src = TestData.buffer(file * 100L + i, content.size(), chunk);
                        try {
                            f.write(content.size(), src);
                        } catch (NoSpaceException e) {
                            refused = e;
                            content.append(src.flip());
                            accepted.add(java.util.Arrays.copyOf(content.bytes(), (int) f.size()));
                            break outer;
                        }
                        content.append(src.flip());
                    }
                    accepted.add(content.bytes());
                }
            }
            fs.sync();
        }
        assertThat(refused).as("a write failed with ENOSPC").isNotNull();
        try (IomapFileSystem fs = Images.mount(device)) {
            for (int file = 0; file < accepted.size(); file++) {
                try (IomapFile f = fs.open("/f" + file)) {
                    byte[] want = accepted.get(file);
                    assertThat(f.size()).as("size of /f%d", file).isEqualTo(want.length);
                    ByteBuffer back = ByteBuffer.allocate(want.length);
                    f.read(0, back);
                    assertThat(back.array()).as("content of /f%d", file).isEqualTo(want);
                }
            }
        }
        assertThat(Images.ADAPTER.fsck(device, true).problems()).isEmpty();
    }

    /**
     * Copy on write frees an overwritten block only when the transaction that freed it is durable; a
     * writer that overwrites more than the free space, with writeback (at the dirty limit) committing
     * but nobody flushing the journal, must get those blocks back (the reservation flushes the journal)
     * instead of ENOSPC.
     */
    @Test
    void overwritingMoreThanTheFreeSpaceReclaimsTheBlocksOverwritesFreed() throws IOException {
        int blockSize = 4096;
        RamBlockDevice device = new RamBlockDevice(blockSize, 4L << 20);
        Images.format(device, Map.of());
        int blocks = 300;
        MountOptions options = new MountOptions(PageCacheOptions.builder().dirtyBackgroundBytes(64 << 10)
                .dirtyLimitBytes(128 << 10).build(), true);
        byte[] last = null;
        try (IomapFileSystem fs = IomapFileSystems.mount("bcachefs-like", device, options);
                IomapFile f = fs.create("/f")) {
            f.write(0, TestData.buffer(1, 0, blocks * blockSize));
            f.fsync();
            for (int round = 2; round <= 5; round++) {
                for (int b = 0; b < blocks; b += 8) {
                    f.write((long) b * blockSize, TestData.buffer(round, (long) b * blockSize, 8 * blockSize));
                }
                last = TestData.pattern(round, 0, blocks * blockSize);
            }
            f.fsync();
        }
        try (IomapFileSystem fs = Images.mount(device); IomapFile f = fs.open("/f")) {
            ByteBuffer back = ByteBuffer.allocate(blocks * blockSize);
            f.read(0, back);
            assertThat(back.array()).isEqualTo(last);
        }
        assertThat(Images.ADAPTER.fsck(device, true).problems()).isEmpty();
    }

    /** A growing byte array. */
    private static final class ByteArrayBuilder {
        private final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();

        int size() {
            return out.size();
        }

        void append(ByteBuffer b) {
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            out.writeBytes(bytes);
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }
}
