package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35 item 16: corruption a mounted filesystem detects (here a data block of bcachefs-like that
 * fails its extent's checksum) reaches the program as EIO and the mount's output as one line per
 * failed call naming the operation, the path and what is damaged where; the Java stack trace only with
 * {@code --debug}. The mount runs in its own JVM, as {@code bin/iomap mount} does.
 */
@Timeout(180)
class CorruptionThroughMountTest {
    /** How long a mount may take to appear or to return after its unmount (JVM start on a loaded machine). */
    private static final long WAIT_SECONDS = 40;
    private static final int LENGTH = 64 << 10;

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();
    private final List<Path> mountPoints = new ArrayList<>();

    @AfterEach
    void stopEverything() throws Exception {
        for (Path mountPoint : mountPoints) {
            if (mounted(mountPoint)) {
                new ProcessBuilder("fusermount3", "-u", "-z", mountPoint.toString()).inheritIO().start()
                        .waitFor(10, TimeUnit.SECONDS);
            }
        }
        for (Process process : processes) {
            process.destroy();
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aChecksumFailureIsEioToTheProgramAndOneLineInTheMountsOutputWithTheStackOnlyWithDebug()
            throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "FUSE mount test skipped: /dev/fuse is absent");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/fusermount3")) || Files.isExecutable(Path.of("/bin/fusermount3")),
                "FUSE mount test skipped: fusermount3 is not installed");
        Path image = dir.resolve("b.img");
        Cli mkfs = Cli.run("mkfs", "--adapter", "bcachefs-like", "--size", "16m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        byte[] content = new byte[LENGTH];
        for (int i = 0; i < LENGTH; i++) {
            content[i] = (byte) (i * 31 + i / 4096 + 7);
        }
        String first = mountAndRun(image, "write", false, mountPoint -> Files.write(mountPoint.resolve("f"), content));
        assertThat(first).as("the mount's output when nothing fails").doesNotContain("failed:");
        flipByteOfBlock(image, Arrays.copyOfRange(content, 4096, 8192));

        String plain = mountAndRun(image, "plain", false, mountPoint ->
                assertThatThrownBy(() -> Files.readAllBytes(mountPoint.resolve("f"))).isInstanceOf(IOException.class)
                        .hasMessageContaining("Input/output error"));
        assertThat(plain).as("the mount's output").doesNotContain("Exception").doesNotContain("\tat ");
        List<String> failures = plain.lines().filter(line -> line.contains(" failed: ")).toList();
        assertThat(failures).as(plain).isNotEmpty().allSatisfy(line -> assertThat(line).startsWith("iomap: read /f failed: EIO: "
                + "bcachefs-like: crc32c mismatch in the extent of inode ").contains(" at file offset ").contains(" (device blocks "));

        String debug = mountAndRun(image, "debug", true, mountPoint ->
                assertThatThrownBy(() -> Files.readAllBytes(mountPoint.resolve("f"))).isInstanceOf(IOException.class));
        assertThat(debug).contains("crc32c mismatch").contains("ChecksumException").contains("\tat dev.iomap.");
    }

    /** Something done through a mount point. */
    @FunctionalInterface
    private interface Through {
        void run(Path mountPoint) throws Exception;
    }

    /**
     * Mounts {@code image} in a new JVM, runs {@code action} on its mount point, unmounts.
     *
     * @return what the mount printed on stderr
     */
    private String mountAndRun(Path image, String name, boolean debug, Through action) throws Exception {
        Path mountPoint = Files.createDirectory(dir.resolve("mnt-" + name));
        mountPoints.add(mountPoint);
        Path err = dir.resolve(name + ".err");
        List<String> args = new ArrayList<>(List.of("mount", image.toString(), mountPoint.toString()));
        if (debug) {
            args.add("--debug");
        }
        Process mount = start(err, args);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!mounted(mountPoint)) {
            if (!mount.isAlive() || System.nanoTime() > end) {
                throw new AssertionError("the mount did not appear (alive: " + mount.isAlive() + "): "
                        + Files.readString(err));
            }
            Thread.sleep(50);
        }
        action.run(mountPoint);
        Process fusermount = new ProcessBuilder("fusermount3", "-u", mountPoint.toString()).inheritIO().start();
        assertThat(fusermount.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(mount.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).as("iomap mount returned").isTrue();
        return Files.readString(err);
    }

    /** Flips one byte of the image block that holds {@code block}'s bytes. */
    private static void flipByteOfBlock(Path image, byte[] block) throws IOException {
        byte[] bytes = Files.readAllBytes(image);
        for (int at = 0; at + block.length <= bytes.length; at += 4096) {
            if (Arrays.equals(bytes, at, at + block.length, block, 0, block.length)) {
                try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
                    file.seek(at + 100);
                    file.write(bytes[at + 100] ^ 0x40);
                }
                return;
            }
        }
        throw new AssertionError("the file's second block is not in the image");
    }

    /** Runs {@code iomap ARGS} in a new JVM on the test class path, stderr to {@code err}. */
    private Process start(Path err, List<String> args) throws IOException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-cp", System.getProperty("java.class.path"),
                IomapCli.class.getName()));
        command.addAll(args);
        Process process = new ProcessBuilder(command).redirectError(err.toFile()).start();
        processes.add(process);
        return process;
    }

    /** @return whether the kernel lists a mount on {@code mountPoint} (in /proc/self/mountinfo) */
    private static boolean mounted(Path mountPoint) throws IOException {
        String target = " " + mountPoint.toRealPath() + " ";
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().anyMatch(line -> line.contains(target));
    }
}
