package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.IomapFile;
import dev.iomap.api.NoSpaceException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NoSpaceTest {
    private static final int CHUNK = 256 * 1024;

    @Test
    void fillingTheDeviceFailsCleanlyAndKeepsWhatWasWritten() throws Exception {
        try (XfsFixture fx = XfsFixture.create(8L << 20, Map.of())) {
            List<String> complete = new ArrayList<>();
            long partialSize = -1;
            String partial = null;
            outer:
            for (int i = 0; i < 100; i++) {
                String path = "/f" + i;
                try (IomapFile file = fx.fs.create(path)) {
                    for (int c = 0; c < 4; c++) {
                        try {
                            XfsFixture.writeAt(file, (long) c * CHUNK, pattern(i * 4 + c, 0, CHUNK));
                        } catch (NoSpaceException e) {
                            file.fsync();
                            partial = path;
                            partialSize = file.size();
                            break outer;
                        }
                    }
                    file.fsync();
                    complete.add(path);
                }
            }
            assertThat(partial).as("the device filled up").isNotNull();
            assertThat(complete).hasSizeGreaterThan(4);
            assertThat(fx.fs.statfs().freeBlocks()).isLessThan(CHUNK / 4096);
            fx.remount();
            for (int i = 0; i < complete.size(); i++) {
                assertThat(fx.readFile(complete.get(i))).isEqualTo(expected(i, 4 * CHUNK));
            }
            assertThat(fx.readFile(partial)).isEqualTo(expected(complete.size(), (int) partialSize));
            // Space comes back when files go, even before the frees are committed.
            fx.fs.unlink(complete.getFirst());
            fx.fs.unlink(complete.get(1));
            try (IomapFile file = fx.write("/again", pattern(99, 0, 6 * CHUNK))) {
                file.fsync();
            }
            assertThat(fx.readFile("/again")).isEqualTo(pattern(99, 0, 6 * CHUNK));
        }
    }

    @Test
    void fallocateThatDoesNotFitChangesNothing() throws Exception {
        try (XfsFixture fx = XfsFixture.create(8L << 20, Map.of())) {
            try (IomapFile file = fx.write("/f", pattern(1, 0, 10_000))) {
                file.fsync();
                long free = fx.fs.statfs().freeBlocks();
                long allocated = file.stat().allocatedBytes();
                assertThatThrownBy(() -> file.fallocate(FallocateMode.ALLOCATE, 0, 64L << 20, true))
                        .isInstanceOf(NoSpaceException.class);
                assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free);
                assertThat(file.stat().allocatedBytes()).isEqualTo(allocated);
                assertThatThrownBy(() -> file.write(20_000, ByteBuffer.wrap(new byte[16 << 20])))
                        .isInstanceOf(NoSpaceException.class);
                assertThat(file.size()).isEqualTo(10_000);
                assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free);
            }
            assertThat(fx.readFile("/f")).isEqualTo(pattern(1, 0, 10_000));
        }
    }

    private static byte[] expected(int file, int size) {
        byte[] data = new byte[size];
        for (int c = 0; c * CHUNK < size; c++) {
            byte[] chunk = pattern(file * 4 + c, 0, CHUNK);
            System.arraycopy(chunk, 0, data, c * CHUNK, Math.min(CHUNK, size - c * CHUNK));
        }
        return data;
    }
}
