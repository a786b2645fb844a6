package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.DeviceBusyException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.MemoryLayout.PathElement;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lock a {@link FileBlockDevice} holds on its image: exclusive for writing, shared read-only,
 * conflicting between devices of one process as between processes, and kept when this process
 * closes some other channel on the file. Other processes are JVMs running {@link LockHolderMain},
 * each stopped by the test that started it.
 */
@Timeout(120)
@EnabledOnOs(value = OS.LINUX, architectures = {"amd64", "aarch64"})
class ImageLockTest {
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
    void theStructFlockIsLaidOutAsTheKernelReadsIt() {
        assertThat(ImageLock.FLOCK.byteSize()).isEqualTo(32);
        assertThat(offset("l_type")).isZero();
        assertThat(offset("l_whence")).isEqualTo(2);
        assertThat(offset("l_start")).isEqualTo(8);
        assertThat(offset("l_len")).isEqualTo(16);
        assertThat(offset("l_pid")).isEqualTo(24);
    }

    @Test
    void onLinuxTheLockIsAnOpenFileDescriptionLock() throws IOException {
        try (var channel = FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE);
                var lock = ImageLock.acquire(image, channel, false)) {
            assertThat(lock.isOpenFileDescriptionLock()).as(lock.toString()).isTrue();
        }
    }

    @Test
    void aDeviceForWritingKeepsOutEveryOtherDeviceOfThisProcess() throws IOException {
        try (var writer = FileBlockDevice.open(image, BLOCK, false)) {
            assertThat(writer.readOnly()).isFalse();
            assertBusy(() -> FileBlockDevice.open(image, BLOCK, false), "open for writing");
            assertBusy(() -> FileBlockDevice.open(image, BLOCK, 32L * BLOCK, false), "open for writing");
            assertBusy(() -> FileBlockDevice.openReadOnly(image, BLOCK, false), "open for writing");
        }
        FileBlockDevice.openReadOnly(image, BLOCK, false).close();
        FileBlockDevice.open(image, BLOCK, false).close();
    }

    @Test
    void readOnlyDevicesShareTheImageButKeepOutAWriter() throws IOException {
        var first = FileBlockDevice.openReadOnly(image, BLOCK, false);
        try (var second = FileBlockDevice.openReadOnly(image, BLOCK, false)) {
            assertThat(first.readOnly() && second.readOnly()).isTrue();
            assertBusy(() -> FileBlockDevice.open(image, BLOCK, false), "open read-only");
            first.close();
            assertBusy(() -> FileBlockDevice.open(image, BLOCK, false), "open read-only");
        } finally {
            first.close();
        }
        FileBlockDevice.open(image, BLOCK, false).close();
    }

    @Test
    void anotherProcessWritingTheImageKeepsUsOut() throws Exception {
        try (Child holder = Child.start("hold-rw", image)) {
            assertThat(holder.line()).isEqualTo("held");
            assertBusy(() -> FileBlockDevice.open(image, BLOCK, false), "open for writing");
            assertBusy(() -> FileBlockDevice.openReadOnly(image, BLOCK, false), "open for writing");
        }
        FileBlockDevice.open(image, BLOCK, false).close();
    }

    @Test
    void anotherProcessReadingTheImageLetsUsReadButNotWrite() throws Exception {
        try (Child holder = Child.start("hold-ro", image)) {
            assertThat(holder.line()).isEqualTo("held");
            FileBlockDevice.openReadOnly(image, BLOCK, false).close();
            assertBusy(() -> FileBlockDevice.open(image, BLOCK, false), "open read-only");
        }
        FileBlockDevice.open(image, BLOCK, false).close();
    }

    @Test
    void aClassicFcntlLockOfAnotherProcessKeepsUsOutAndNamesIt() throws Exception {
        try (Child holder = Child.start("hold-filelock", image)) {
            assertThat(holder.line()).isEqualTo("held");
            assertBusy(() -> FileBlockDevice.open(image, BLOCK, false),
                    "open for writing (process " + holder.process().pid() + ")");
        }
    }

    @Test
    void ourDevicesKeepOutAnotherProcess() throws Exception {
        try (var writer = FileBlockDevice.open(image, BLOCK, false)) {
            assertThat(writer.readOnly()).isFalse();
            assertThat(Child.run("try-ro", image)).startsWith("busy: " + image + " is in use");
        }
        try (var reader = FileBlockDevice.openReadOnly(image, BLOCK, false)) {
            assertThat(reader.readOnly()).isTrue();
            assertThat(Child.run("try-ro", image)).isEqualTo("opened");
            assertThat(Child.run("try-rw", image)).startsWith("busy: " + image + " is in use");
        }
    }

    /** The weakness of fcntl record locks that the open file description lock removes. */
    @Test
    void closingAnotherChannelOnTheImageKeepsTheLock() throws Exception {
        try (var writer = FileBlockDevice.open(image, BLOCK, false)) {
            assertThat(writer.readOnly()).isFalse();
            FileChannel.open(image, StandardOpenOption.READ).close();
            assertThat(Child.run("try-rw", image)).startsWith("busy: " + image + " is in use");
            assertThat(Child.run("try-ro", image)).startsWith("busy: " + image + " is in use");
        }
    }

    /**
     * What the fallback still suffers, and {@link #closingAnotherChannelOnTheImageKeepsTheLock} would
     * without the open file description lock: closing any channel of this process on the file drops
     * its fcntl record lock for every other process.
     */
    @Test
    void theFileLockFallbackIsDroppedByClosingAnotherChannel() throws Exception {
        try (var channel = FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE);
                var lock = ImageLock.fileLock(image, channel, false)) {
            assertThat(lock.isOpenFileDescriptionLock()).isFalse();
            assertThat(Child.run("try-rw", image)).startsWith("busy: ");
            FileChannel.open(image, StandardOpenOption.READ).close();
            assertThat(Child.run("try-rw", image)).isEqualTo("opened");
        }
    }

    private static long offset(String field) {
        return ImageLock.FLOCK.byteOffset(PathElement.groupElement(field));
    }

    @FunctionalInterface
    private interface Open {
        FileBlockDevice open() throws IOException;
    }

    /** Asserts the open is refused with one line naming the image and saying how the holder has it. */
    private void assertBusy(Open open, String holder) {
        assertThatThrownBy(() -> open.open().close())
                .isInstanceOf(DeviceBusyException.class)
                .hasMessageStartingWith(image + " is in use: another device has it " + holder)
                .hasMessageNotContaining("\n");
    }

    /** A {@link LockHolderMain} process; closing it closes its input and waits for it, or kills it. */
    private record Child(Process process, BufferedReader out) implements AutoCloseable {

        static Child start(String action, Path image) throws IOException {
            String java = ProcessHandle.current().info().command().orElseThrow();
            Process process = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                    System.getProperty("java.class.path"), LockHolderMain.class.getName(), action, image.toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            return new Child(process, new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8)));
        }

        /** @return the one line a {@code try-} action printed, after it exited 0 */
        static String run(String action, Path image) throws IOException, InterruptedException {
            try (Child child = start(action, image)) {
                String line = child.line();
                assertThat(child.process.waitFor(60, TimeUnit.SECONDS)).as("the child exited").isTrue();
                assertThat(child.process.exitValue()).isZero();
                return line;
            }
        }

        String line() throws IOException {
            return out.readLine();
        }

        /** Closes its input, waits up to a minute for it to end, then kills it if it has not. */
        @Override
        public void close() throws IOException {
            try (out) {
                process.getOutputStream().close();
                process.waitFor(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                process.destroyForcibly();
            }
        }
    }
}
