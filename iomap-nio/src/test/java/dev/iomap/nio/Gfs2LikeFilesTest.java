package dev.iomap.nio;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.IomapException;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The NIO contract on the gfs2-like adapter, plus its own mount options through {@code adapterOptions}:
 * {@code data=journal} puts the data through the journal and leaves the same bytes as an ordered
 * mount reads back; a value it does not take, or a journal the image lacks, is refused with its message.
 */
class Gfs2LikeFilesTest extends IomapFilesContract {
    @Override
    String adapter() {
        return "gfs2-like";
    }

    /** 3 blocks and 100 bytes of a counting pattern: past the stuffed capacity, ending mid-block. */
    private static byte[] pattern() {
        byte[] bytes = new byte[3 * 4096 + 100];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 7 + i / 4096);
        }
        return bytes;
    }

    @Test
    void aDataJournalMountLeavesTheBytesAnOrderedMountReadsBack() throws IOException {
        fs.close();
        fs = FileSystems.newFileSystem(uri(image), Map.of("adapterOptions", "data=journal"));
        byte[] pattern = pattern();
        Files.writeString(fs.getPath("/small"), "stuffed in the dinode");
        try (FileChannel channel = FileChannel.open(fs.getPath("/big"), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE)) {
            assertThat(channel.write(ByteBuffer.wrap(pattern))).isEqualTo(pattern.length);
            channel.force(false);
            assertThat(channel.write(ByteBuffer.wrap("tail".getBytes(UTF_8)), 8192)).isEqualTo(4);
        }
        fs.close();
        try (var device = FileBlockDevice.open(image, 4096, false)) {
            assertThat(IomapFileSystems.fsck(adapter(), device).problems()).isEmpty();
        }

        fs = FileSystems.newFileSystem(uri(image), Map.of("adapterOptions", "data=ordered"));
        byte[] expected = pattern.clone();
        System.arraycopy("tail".getBytes(UTF_8), 0, expected, 8192, 4);
        assertThat(Files.readAllBytes(fs.getPath("/big"))).isEqualTo(expected);
        assertThat(Files.readString(fs.getPath("/small"))).isEqualTo("stuffed in the dinode");
    }

    @Test
    void aDataModeOrJournalItDoesNotHaveIsRefusedWithItsMessage() throws IOException {
        fs.close();
        assertThatThrownBy(() -> FileSystems.newFileSystem(uri(image), Map.of("adapterOptions", "data=writeback")))
                .isInstanceOf(IomapException.class)
                .hasMessage("gfs2-like mount option data=writeback: use ordered or journal");
        assertThatThrownBy(() -> FileSystems.newFileSystem(uri(image), Map.of("adapterOptions", "journal=1")))
                .isInstanceOf(IomapException.class)
                .hasMessage("journal 1 does not exist: the filesystem has 1 journals");
        fs = FileSystems.newFileSystem(uri(image), Map.of("adapterOptions", Map.of("journal", 0, "data", "ordered")));
        assertThat(Files.isDirectory(fs.getPath("/"))).isTrue();
    }
}
