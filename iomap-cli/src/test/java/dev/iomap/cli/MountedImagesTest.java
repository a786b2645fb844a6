package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MountedImages} reads mountinfo(5) lines: the mount point of a {@code fuse.iomap} mount whose
 * source is the image (octal escapes undone in both, as {@code MountTableTest} pins), nothing for other file
 * system types or other images, and nothing for a {@code fuseblk.iomap} source that is not a loop device.
 */
class MountedImagesTest {
    @TempDir
    Path dir;

    @Test
    void theMountPointOfAFuseIomapMountOfTheImageIsFound() throws IOException {
        Path image = Files.createFile(dir.resolve("my image.img"));
        String escaped = image.toString().replace(" ", "\\040");
        List<String> lines = List.of(
                "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
                "98 22 0:50 / /mnt/other rw,nosuid,nodev shared:60 - fuse.iomap " + dir.resolve("other.img") + " rw",
                "99 22 0:51 / /mnt/with\\040space rw,nosuid,nodev shared:61 - fuse.iomap " + escaped + " rw,user_id=0");

        assertThat(MountedImages.mountPointOf(image, lines)).contains(Path.of("/mnt/with space"));
        assertThat(MountedImages.mountPointOf(dir.resolve("other.img"), lines)).contains(Path.of("/mnt/other"));
        assertThat(MountedImages.mountPointOf(dir.resolve("third.img"), lines)).isEmpty();
    }

    @Test
    void otherTypesAndABlockSourceThatIsNoLoopDeviceAreNotTheImage() throws IOException {
        Path image = Files.createFile(dir.resolve("x.img"));
        List<String> lines = List.of(
                "98 22 0:50 / /mnt/a rw shared:60 - fuse.sshfs " + image + " rw",
                "99 22 0:51 / /mnt/b rw shared:61 - fuseblk.iomap /dev/not-a-loop-device rw",
                "100 22 0:52 / /mnt/c rw shared:62 - ext4 " + image + " rw");

        assertThat(MountedImages.mountPointOf(image, lines)).isEmpty();
    }
}
