package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.DeviceBusyException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FileBlockDevice#openShared}: the devices of cluster nodes share one image for writing with each
 * other, and with nobody else (a device for writing of its own, a read-only one), either way round.
 * Open file description locks conflict between descriptors of one process as between processes, so
 * devices of this JVM stand for the nodes.
 */
@EnabledOnOs(value = OS.LINUX, architectures = {"amd64", "aarch64"})
class SharedImageLockTest {
    private static final int BLOCK = 4096;

    @TempDir
    Path dir;
    private Path image;

    @BeforeEach
    void sparseImage() throws IOException {
        image = dir.resolve("image");
        FileBlockDevice.open(image, BLOCK, 16L * BLOCK, false).close();
    }

    @Test
    void threeNodesShareTheImageAndSeeEachOthersWrites() throws IOException {
        try (FileBlockDevice a = FileBlockDevice.openShared(image, BLOCK, false);
                FileBlockDevice b = FileBlockDevice.openShared(image, BLOCK, false);
                FileBlockDevice c = FileBlockDevice.openShared(image, BLOCK, false)) {
            assertThat(a.readOnly()).isFalse();
            ByteBuffer block = ByteBuffer.allocate(BLOCK);
            block.put(0, (byte) 0x5a).put(BLOCK - 1, (byte) 0xa5);
            a.write(3L * BLOCK, block, IoPurpose.DATA).join();
            ByteBuffer read = ByteBuffer.allocate(BLOCK);
            b.read(3L * BLOCK, read);
            assertThat(read.get(0)).isEqualTo((byte) 0x5a);
            assertThat(read.get(BLOCK - 1)).isEqualTo((byte) 0xa5);
            assertThat(c.capacity()).isEqualTo(16L * BLOCK);
        }
    }

    @Test
    void aNodeKeepsOutAWriterAndAReaderOfTheirOwn() throws IOException {
        try (FileBlockDevice node = FileBlockDevice.openShared(image, BLOCK, false)) {
            assertThatThrownBy(() -> FileBlockDevice.open(image, BLOCK, false))
                    .isInstanceOf(DeviceBusyException.class)
                    .hasMessage(image + " is in use: a cluster node has it mounted (iomap mount --cluster), in this"
                            + " process or another; unmount every node first");
            assertThatThrownBy(() -> FileBlockDevice.openReadOnly(image, BLOCK, false))
                    .isInstanceOf(DeviceBusyException.class)
                    .hasMessageStartingWith(image + " is in use: a cluster node has it mounted");
            assertThat(node.readOnly()).isFalse();
        }
        FileBlockDevice.open(image, BLOCK, false).close();
    }

    @Test
    void aWriterOrReadersOfTheirOwnKeepOutEveryNode() throws IOException {
        try (FileBlockDevice writer = FileBlockDevice.open(image, BLOCK, false)) {
            assertThatThrownBy(() -> FileBlockDevice.openShared(image, BLOCK, false))
                    .isInstanceOf(DeviceBusyException.class)
                    .hasMessageStartingWith(image + " is in use: another device has it open for writing");
            assertThat(writer.readOnly()).isFalse();
        }
        try (FileBlockDevice reader = FileBlockDevice.openReadOnly(image, BLOCK, false);
                FileBlockDevice another = FileBlockDevice.openReadOnly(image, BLOCK, false)) {
            assertThatThrownBy(() -> FileBlockDevice.openShared(image, BLOCK, false))
                    .isInstanceOf(DeviceBusyException.class)
                    .hasMessageStartingWith(image + " is in use: another device has it open read-only");
            assertThat(reader.readOnly() && another.readOnly()).isTrue();
        }
        FileBlockDevice.openShared(image, BLOCK, false).close();
    }
}
