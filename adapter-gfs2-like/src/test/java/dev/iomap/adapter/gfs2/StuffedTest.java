package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Stuffed files: data in the dinode block up to its capacity, unstuffed one byte past it. */
class StuffedTest {

    private static byte[] read(IomapFile file) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate((int) file.size());
        file.read(0, buffer);
        return buffer.array();
    }

    @ParameterizedTest(name = "block {0}")
    @ValueSource(ints = {1024, 4096})
    void aStuffedFileReadAndWrittenAtEveryOffsetUpToTheLimitAndOnePastMatchesAModel(int blockSize)
            throws IOException {
        RamBlockDevice device = new RamBlockDevice(blockSize, 8L << 20);
        Gfs2LikeAdapter adapter = new Gfs2LikeAdapter();
        adapter.format(device, FormatOptions.blockSize(blockSize));
        int limit = blockSize - 28 - Dinode.HEADER_BYTES;
        byte[] model = new byte[limit + 1];
        try (IomapFileSystem fs = CoreRuntime.mount(adapter, device, MountOptions.defaults());
                IomapFile file = fs.create("/s")) {
            for (int offset = 0; offset <= limit; offset++) {
                byte value = (byte) (offset * 7 + 1);
                model[offset] = value;
                file.write(offset, ByteBuffer.wrap(new byte[] {value}));
                assertThat(read(file)).as("after a write at %d", offset).isEqualTo(Arrays.copyOf(model, offset + 1));
                long allocated = file.stat().allocatedBytes();
                assertThat(allocated).as("blocks held after a write at %d (the dinode, then one data block)", offset)
                        .isEqualTo(offset < limit ? blockSize : 2L * blockSize);
                if (offset % 97 == 0 || offset >= limit - 1) {
                    fs.dropCleanCache();
                    for (int at = 0; at <= offset; at += Math.max(1, offset / 5)) {
                        ByteBuffer one = ByteBuffer.allocate(1);
                        file.read(at, one);
                        assertThat(one.get(0)).as("byte %d read from the device after a write at %d", at, offset)
                                .isEqualTo(model[at]);
                    }
                }
            }
            file.fsync();
        }
        try (IomapFileSystem fs = CoreRuntime.mount(adapter, device, MountOptions.defaults());
                IomapFile file = fs.open("/s")) {
            assertThat(read(file)).as("after a remount").isEqualTo(model);
            file.truncate(10);
            assertThat(file.stat().allocatedBytes()).as("truncating down does not restuff").isEqualTo(2L * blockSize);
        }
        assertThat(adapter.fsck(device).problems()).isEmpty();
    }
}
