package dev.iomap.devices;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Gathering direct writes ({@code pwritev} with {@code O_DIRECT}): the bytes land in order at the
 * position, large lists go in several calls, a short write is continued where it stopped, and
 * buffers the kernel cannot take as they are are refused before anything is written.
 *
 * <p>The file lives under {@code target/}, on the disk the build runs on ({@code @TempDir} may be a
 * tmpfs, which refuses {@code O_DIRECT}). Off Linux on x86_64 and aarch64 the tests that write are
 * skipped with the reason.
 */
class VectoredWritesTest {
    private static final int ALIGNMENT = 4096;
    private static Path dir;

    private Path file;
    private VectoredWrites writes;
    /** Memory the garbage collector frees: the writes run in the test's thread. */
    private Arena arena;

    @BeforeAll
    static void createDirectoryOnDisk() throws IOException {
        Path target = Files.createDirectories(Path.of("target", "device-tests").toAbsolutePath());
        dir = Files.createTempDirectory(target, "vectored-");
    }

    @AfterAll
    static void deleteDirectory() throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    @BeforeEach
    void openFile() throws IOException {
        file = Files.createTempFile(dir, "image-", "");
        Files.write(file, new byte[8 << 20]);
        arena = Arena.ofAuto();
    }

    @AfterEach
    void close() throws IOException {
        try {
            if (writes != null) {
                writes.close();
            }
        } finally {
            Files.delete(file);
        }
    }

    private VectoredWrites open() {
        String os = System.getProperty("os.name") + "/" + System.getProperty("os.arch");
        Assumptions.assumeTrue(os.equals("Linux/amd64") || os.equals("Linux/aarch64"),
                "skipped: gathering direct writes are made on Linux on x86_64 and aarch64 only, not " + os);
        writes = VectoredWrites.open(file, ALIGNMENT);
        assertThat(writes).as("opened with O_DIRECT on the build's disk").isNotNull();
        return writes;
    }

    private ByteBuffer aligned(byte[] data, int from, int length) {
        return arena.allocate(length, ALIGNMENT).asByteBuffer().put(data, from, length).flip();
    }

    private static byte[] random(int length) {
        byte[] data = new byte[length];
        new Random(length).nextBytes(data);
        return data;
    }

    private byte[] fileBytes(long position, int length) throws IOException {
        byte[] all = Files.readAllBytes(file);
        byte[] part = new byte[length];
        System.arraycopy(all, (int) position, part, 0, length);
        return part;
    }

    @Test
    void writesTheBuffersInOrderAtThePositionInOneCall() throws IOException {
        VectoredWrites gathering = open();
        byte[] data = random(9 * ALIGNMENT);
        List<ByteBuffer> srcs = List.of(aligned(data, 0, ALIGNMENT), aligned(data, ALIGNMENT, 6 * ALIGNMENT),
                aligned(data, 7 * ALIGNMENT, 2 * ALIGNMENT));

        assertThat(gathering.write(3L * ALIGNMENT, srcs)).isTrue();

        assertThat(fileBytes(3L * ALIGNMENT, data.length)).isEqualTo(data);
        assertThat(fileBytes(0, 3 * ALIGNMENT)).as("nothing before the position").containsOnly(0);
        assertThat(gathering.calls()).isEqualTo(1);
        assertThat(srcs).as("the positions are the caller's").allSatisfy(src -> assertThat(src.position()).isZero());
    }

    @Test
    void moreBuffersThanOneCallTakesGoInSeveralCalls() throws IOException {
        VectoredWrites gathering = open();
        int count = VectoredWrites.IOV_MAX + 100;
        byte[] data = random(count * ALIGNMENT);
        List<ByteBuffer> srcs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            srcs.add(aligned(data, i * ALIGNMENT, ALIGNMENT));
        }

        assertThat(gathering.write(ALIGNMENT, srcs)).isTrue();

        assertThat(fileBytes(ALIGNMENT, data.length)).isEqualTo(data);
        assertThat(gathering.calls()).isEqualTo(2);
    }

    @Test
    void refusesBuffersTheKernelCannotTakeAsTheyAreAndWritesNothing() throws IOException {
        VectoredWrites gathering = open();
        byte[] data = random(2 * ALIGNMENT);
        ByteBuffer good = aligned(data, 0, ALIGNMENT);
        ByteBuffer heap = ByteBuffer.wrap(data, 0, ALIGNMENT);
        ByteBuffer misaligned = arena.allocate(2L * ALIGNMENT, ALIGNMENT).asByteBuffer()
                .position(512).limit(512 + ALIGNMENT).slice();
        ByteBuffer shortOne = aligned(data, 0, ALIGNMENT).limit(ALIGNMENT - 512);

        for (ByteBuffer bad : List.of(heap, misaligned, shortOne)) {
            assertThat(gathering.write(0, List.of(good, bad))).as(bad.toString()).isFalse();
        }

        assertThat(fileBytes(0, 2 * ALIGNMENT)).containsOnly(0);
        assertThat(gathering.calls()).isZero();
    }

    @Test
    void aFailedCallNamesTheFileTheRangeAndTheErrno() {
        VectoredWrites gathering = open();
        long past = 1L << 62; // past the largest file any Linux filesystem allows (EFBIG or EINVAL)

        assertThatThrownBy(() -> gathering.write(past, List.of(aligned(random(ALIGNMENT), 0, ALIGNMENT))))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("pwritev of 4096 bytes at " + past + " to " + file + " failed: errno ");
    }

    @Test
    void aClosedWriterRefusesWritesAndClosesOnce() throws IOException {
        VectoredWrites gathering = open();
        gathering.close();
        gathering.close();

        assertThatThrownBy(() -> gathering.write(0, List.of(aligned(random(ALIGNMENT), 0, ALIGNMENT))))
                .isInstanceOf(IOException.class)
                .hasMessage("gathering writes to " + file + " are closed");
        assertThat(fileBytes(0, ALIGNMENT)).containsOnly(0);
    }

    @Test
    void aShortWriteIsContinuedInsideTheIovecItStoppedIn() {
        MemorySegment iovecs = arena.allocate(3 * 16L, 8);
        long[] lengths = {4096, 8192, 4096};
        for (int i = 0; i < 3; i++) {
            iovecs.set(JAVA_LONG, i * 16L, 1_000_000L * (i + 1));
            iovecs.set(JAVA_LONG, i * 16L + 8, lengths[i]);
        }

        assertThat(VectoredWrites.skip(iovecs, 0, 4096 + 1024)).isEqualTo(1);
        assertThat(iovecs.get(JAVA_LONG, 16)).as("base moved past what was written").isEqualTo(2_000_000L + 1024);
        assertThat(iovecs.get(JAVA_LONG, 24)).as("length shortened").isEqualTo(8192 - 1024);
        assertThat(iovecs.get(JAVA_LONG, 0)).as("a whole iovec is skipped, not changed").isEqualTo(1_000_000L);

        assertThat(VectoredWrites.skip(iovecs, 1, 8192 - 1024)).as("exactly to the end of one").isEqualTo(2);
        assertThat(VectoredWrites.skip(iovecs, 2, 4096)).as("all written").isEqualTo(3);
    }

    @Test
    void errnosAWriteMeetsAreNamed() {
        assertThat(VectoredWrites.describe(28)).isEqualTo("errno 28 (ENOSPC: no space left on device)");
        assertThat(VectoredWrites.describe(5)).isEqualTo("errno 5 (EIO: input/output error)");
        assertThat(VectoredWrites.describe(1)).isEqualTo("errno 1");
    }

    @Test
    void anAlignmentThatIsNotAPowerOfTwoIsRefused() {
        assertThatThrownBy(() -> VectoredWrites.open(file, 3000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("alignment must be a power of two, got 3000");
    }
}
