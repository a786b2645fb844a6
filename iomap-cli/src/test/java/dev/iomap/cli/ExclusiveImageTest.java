package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12, data-loss cases 2 and 3: an image in use (mounted in this JVM or by another process)
 * is refused by mount, mkfs, fsck and stat with one line, and nothing about it changes.
 */
@Timeout(120)
class ExclusiveImageTest {
    private static final String CONTENT = "written by the first mount";

    @TempDir
    Path dir;

    @Test
    void anImageMountedInThisProcessIsRefusedByEveryCommand() throws Exception {
        Path image = formatted();
        try (var device = FileBlockDevice.open(image, 4096, false);
                IomapFileSystem fs = IomapFileSystems.mount("xfs-like", device, MountOptions.defaults())) {
            byte[] mounted = Files.readAllBytes(image);
            assertEveryCommandRefuses(image);
            assertThat(Arrays.equals(Files.readAllBytes(image), mounted)).as("the refused commands changed nothing")
                    .isTrue();
            writeHeld(fs);
        }
        assertCleanAndHolding(image);
    }

    @Test
    void anImageMountedByAnotherProcessIsRefusedByEveryCommand() throws Exception {
        Path image = formatted();
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process holder = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"),
                "--sun-misc-unsafe-memory-access=allow", HoldMountMain.class.getName(), "xfs-like",
                image.toString(), CONTENT)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            var lines = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            assertThat(lines.readLine()).as("the holder mounted the image").isEqualTo("mounted");
            long size = Files.size(image);

            assertEveryCommandRefuses(image);
            assertThat(Files.size(image)).isEqualTo(size);

            holder.getOutputStream().close();
            assertThat(holder.waitFor(60, TimeUnit.SECONDS)).as("the holder unmounted").isTrue();
            assertThat(holder.exitValue()).isZero();
        } finally {
            holder.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        assertCleanAndHolding(image);
    }

    private Path formatted() {
        Path image = dir.resolve("fs.img");
        Cli mkfs = Cli.run("mkfs", "--size=16m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        return image;
    }

    private void assertEveryCommandRefuses(Path image) throws IOException {
        Path mountPoint = Files.createDirectories(dir.resolve("mnt"));
        List<Cli> runs = new ArrayList<>();
        runs.add(Cli.run("mount", "--busy-timeout=0", image.toString(), mountPoint.toString()));
        runs.add(Cli.run("mkfs", "--size=16m", image.toString()));
        runs.add(Cli.run("mkfs", "--force", "--size=8m", image.toString()));
        runs.add(Cli.run("fsck", image.toString()));
        runs.add(Cli.run("stat", image.toString()));
        for (Cli run : runs) {
            assertThat(run.status()).as(run.err()).isEqualTo(1);
            assertThat(run.err()).startsWith("iomap: " + image + " is in use").endsWith("\n")
                    .hasLineCount(1).doesNotContain("Exception");
            assertThat(run.out()).isEmpty();
        }
        assertThat(Files.size(image)).isEqualTo(16L << 20);
    }

    private static void writeHeld(IomapFileSystem fs) throws IOException {
        try (IomapFile file = fs.create("/held")) {
            file.write(0, ByteBuffer.wrap(CONTENT.getBytes(StandardCharsets.UTF_8)));
            file.fsync();
        }
    }

    private static void assertCleanAndHolding(Path image) throws IOException {
        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        try (var device = FileBlockDevice.open(image, 4096, false);
                IomapFileSystem fs = IomapFileSystems.mount("xfs-like", device, MountOptions.defaults());
                IomapFile file = fs.open("/held")) {
            ByteBuffer back = ByteBuffer.allocate(100);
            int read = file.read(0, back);
            assertThat(new String(back.array(), 0, read, StandardCharsets.UTF_8)).isEqualTo(CONTENT);
        }
    }
}
