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
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 item 12: mkfs writes a random filesystem UUID after the label in the superblock (a cluster's
 * ZooKeeper state is keyed by it); an image made before that has none, and gets a stable one derived
 * from journal 0's random id, so that two images formatted alike are told apart there too.
 */
class FileSystemUuidTest {
    private static final int BLOCK = 4096;

    @Test
    void mkfsWritesANewUuidThatTheSuperblockAndTheMountGiveBack() throws IOException {
        RamBlockDevice first = formatted();
        RamBlockDevice second = formatted();

        UUID uuid = Gfs2Layout.read(first).uuid();

        assertThat(uuid).isNotNull().isNotEqualTo(Gfs2Layout.read(second).uuid());
        assertThat(uuid.version()).as("random").isEqualTo(4);
        try (IomapFileSystem fs = CoreRuntime.mount(new Gfs2LikeAdapter(), first, MountOptions.defaults())) {
            assertThat(fs.uuid()).contains(uuid);
        }
        assertThat(Gfs2Layout.read(first).uuid()).as("after a mount").isEqualTo(uuid);
    }

    @Test
    void anImageWithoutAUuidGetsAStableOneDerivedFromItsJournalAndStaysUsable() throws IOException {
        RamBlockDevice first = withoutUuid(formatted());
        RamBlockDevice second = withoutUuid(formatted());
        Gfs2Layout layout = Gfs2Layout.read(first);
        assertThat(layout.uuid()).isNull();

        UUID derived = layout.filesystemUuid(first);
        try (IomapFileSystem fs = CoreRuntime.mount(new Gfs2LikeAdapter(), first, MountOptions.defaults())) {
            assertThat(fs.uuid()).contains(derived);
            try (IomapFile file = fs.create("/f")) {
                file.write(0, ByteBuffer.wrap(new byte[] {1, 2, 3}));
                file.fsync();
            }
        }

        assertThat(Gfs2Layout.read(first).filesystemUuid(first)).as("the same after a mount that wrote").isEqualTo(derived);
        assertThat(Gfs2Layout.read(second).filesystemUuid(second)).as("another image formatted alike")
                .isNotEqualTo(derived);
        assertThat(new Gfs2LikeAdapter().fsck(first).problems()).isEmpty();
    }

    private static RamBlockDevice formatted() throws IOException {
        RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "alike", Map.of("journals", "2")));
        return device;
    }

    /** Rewrites the superblock as mkfs did before it wrote a UUID: the payload ends after the label. */
    private static RamBlockDevice withoutUuid(RamBlockDevice device) throws IOException {
        Gfs2Layout.read(device).withUuid(null).write(device);
        device.flush();
        return device;
    }
}
