package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ctrl-C on {@code iomap mount}: SIGINT to a JVM blocked in {@link IomapMount#mountForeground}
 * unmounts through its shutdown hook and leaves a clean image that mounts again with the data.
 */
class FuseInterruptTest {
    @TempDir
    Path dir;

    @Test
    void sigintUnmountsAndLeavesACleanImage() throws Exception {
        MountedImage.assumeFuse();
        Path image = dir.resolve("disk.img");
        Path mountPoint = Files.createDirectories(dir.resolve("mnt"));
        Path log = dir.resolve("mount.log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // A build started in the background by a non-interactive shell runs with SIGINT ignored, and
        // a JVM that starts with SIGINT ignored keeps it ignored (no shutdown on Ctrl-C): the child
        // is started through python3, which puts SIGINT back to its default and execs the JVM (same pid).
        Process child = new ProcessBuilder("python3", "-c", "import os, signal, sys;"
                + " signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])",
                java, "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-cp", System.getProperty("java.class.path"),
                ForegroundMountMain.class.getName(), MountedImage.ADAPTER, image.toString(),
                mountPoint.toString(), String.valueOf(16L << 20))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Path real = mountPoint.toRealPath();
            long deadline = System.nanoTime() + MountedImage.TIMEOUT.toNanos();
            while (!MountTable.isFuseMounted(real)) {
                assertThat(child.isAlive()).as("child exited early:%n%s", Files.readString(log)).isTrue();
                assertThat(System.nanoTime()).as("mounted in time").isLessThan(deadline);
                Thread.sleep(50);
            }
            var write = MountedImage.run(real, List.of("bash", "-c",
                    "mkdir kept && printf 'written before Ctrl-C' > kept/file"));
            assertThat(write.exit()).as(write.stderr()).isZero();

            var interrupt = MountedImage.run(dir, List.of("kill", "-INT", String.valueOf(child.pid())));
            assertThat(interrupt.exit()).isZero();
            if (!child.waitFor(MountedImage.TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                // Say where it hangs: the child's output and its threads, before finally kills it
                var threads = MountedImage.run(dir, List.of(
                        Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                        String.valueOf(child.pid()), "Thread.print"));
                throw new AssertionError("child did not exit within " + MountedImage.TIMEOUT + " of SIGINT; its output:\n"
                        + Files.readString(log) + "\nits threads:\n" + threads.stdout());
            }
            assertThat(MountTable.isFuseMounted(real)).isFalse();
            assertThat(Files.readString(log)).contains("iomap: unmounted " + real + "; the image is clean");
        } finally {
            if (child.isAlive()) {
                child.destroyForcibly();
                MountedImage.run(dir, List.of("fusermount3", "-u", "-z", mountPoint.toString()));
            }
        }
        assertThat(MountedImage.fsck(MountedImage.ADAPTER, image).problems())
                .as("fsck after Ctrl-C; child output:%n%s", Files.readString(log)).isEmpty();
        try (MountedImage again = MountedImage.mount(MountedImage.ADAPTER, image, mountPoint)) {
            assertThat(Files.readString(again.mountPoint.resolve("kept" + File.separator + "file")))
                    .isEqualTo("written before Ctrl-C");
            again.unmount();
        }
    }
}
