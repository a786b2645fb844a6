package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20's end-to-end test: a zoned image made by {@code iomap mkfs --adapter zonefs-like}, mounted
 * by {@code iomap mount} (FUSE) and used with the real {@code dd} and {@code truncate}: appends to
 * {@code /seq/0} with {@code conv=fsync}, a write that is not an append refused with EINVAL and a
 * truncate to another size than 0 or the capacity with EPERM (as Linux's zonefs), a truncate to 0
 * resetting the zone; then unmount, {@code iomap fsck} clean, remount and the contents as expected.
 * The same operations through the {@code iomap:zonefs-like:} NIO provider. Every mount is unmounted
 * in a {@code finally}, also when the test fails.
 */
@Timeout(180)
class ZonedImageEndToEndTest {
    private static final int BLOCK = 4096;
    private static final long ZONE = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void aZonedImageThroughFuseWithRealTools() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "FUSE end-to-end test skipped: /dev/fuse is absent");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/fusermount3")) || Files.isExecutable(Path.of("/bin/fusermount3")),
                "FUSE end-to-end test skipped: fusermount3 is not installed");
        Path image = mkfs();
        byte[] host = new byte[8 * BLOCK];
        new Random(20).nextBytes(host);
        Files.write(dir.resolve("host.bin"), host);
        Path mnt = Files.createDirectory(dir.resolve("mnt"));

        CompletableFuture<Cli> mount = mount(image, mnt);
        try {
            awaitMounted(mnt, mount);
            assertThat(sh(mnt, "ls seq | head -3; stat -c '%s' seq/0 cnv/0")).isEqualTo("0\n1\n2\n0\n" + ZONE + "\n");
            sh(mnt, "dd if=../host.bin of=seq/0 bs=4k count=3 oflag=append conv=notrunc,fsync status=none");
            sh(mnt, "dd if=../host.bin of=seq/0 bs=4k skip=3 count=2 oflag=append conv=notrunc,fsync status=none");
            assertThat(Files.readAllBytes(mnt.resolve("seq/0"))).isEqualTo(Arrays.copyOf(host, 5 * BLOCK));

            Shell overwrite = run(mnt, "dd if=../host.bin of=seq/0 bs=4k count=1 conv=notrunc status=none");
            assertThat(overwrite.exit()).as("a write below the end of a sequential file").isNotZero();
            assertThat(overwrite.out()).contains("Invalid argument");
            assertThat(pwriteErrno(mnt.resolve("seq/0"), 2 * BLOCK)).as("pwrite at 8192 of a 20480-byte file")
                    .isEqualTo("EINVAL");
            assertThat(pwriteErrno(mnt.resolve("seq/0"), 6 * BLOCK)).as("pwrite past the end (a hole)")
                    .isEqualTo("EINVAL");
            Shell badTruncate = run(mnt, "truncate -s 4096 seq/0");
            assertThat(badTruncate.exit()).isNotZero();
            assertThat(badTruncate.out()).contains("Operation not permitted");
            Shell cnvTruncate = run(mnt, "truncate -s 0 cnv/0");
            assertThat(cnvTruncate.out()).contains("Operation not permitted");
            Shell create = run(mnt, "touch seq/new");
            assertThat(create.exit()).isNotZero();
            assertThat(Files.size(mnt.resolve("seq/0"))).as("nothing changed by the refusals").isEqualTo(5 * BLOCK);

            sh(mnt, "truncate -s 0 seq/0");
            assertThat(Files.size(mnt.resolve("seq/0"))).as("zone reset").isZero();
            sh(mnt, "dd if=../host.bin of=seq/0 bs=4k skip=5 count=2 oflag=append conv=notrunc,fsync status=none");
            sh(mnt, "dd if=../host.bin of=cnv/0 bs=4k skip=7 seek=3 count=1 conv=notrunc,fsync status=none");
        } finally {
            unmount(mnt);
        }
        Cli mounted = mount.get(60, TimeUnit.SECONDS);
        assertThat(mounted.status()).as(mounted.err()).isZero();

        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        assertThat(fsck.out()).startsWith(image + ": clean (zonefs-like, 4096-byte blocks; checked ");

        CompletableFuture<Cli> again = mount(image, mnt);
        try {
            awaitMounted(mnt, again);
            assertThat(Files.readAllBytes(mnt.resolve("seq/0"))).isEqualTo(Arrays.copyOfRange(host, 5 * BLOCK, 7 * BLOCK));
            byte[] cnv = Files.readAllBytes(mnt.resolve("cnv/0"));
            assertThat(cnv).hasSize((int) ZONE);
            assertThat(Arrays.copyOfRange(cnv, 3 * BLOCK, 4 * BLOCK)).isEqualTo(Arrays.copyOfRange(host, 7 * BLOCK, 8 * BLOCK));
            assertThat(Arrays.copyOf(cnv, 3 * BLOCK)).containsOnly(0);
        } finally {
            unmount(mnt);
        }
        assertThat(again.get(60, TimeUnit.SECONDS).status()).isZero();
    }

    @Test
    void aZonedImageThroughTheNioProvider() throws Exception {
        Path image = mkfs();
        byte[] data = new byte[4 * BLOCK];
        new Random(21).nextBytes(data);
        URI uri = URI.create("iomap:zonefs-like:" + image);
        try (FileSystem fs = FileSystems.newFileSystem(uri, Map.of())) {
            Path seq = fs.getPath("/seq/0");
            assertThat(Files.size(seq)).isZero();
            assertThat(Files.size(fs.getPath("/cnv/0"))).isEqualTo(ZONE);
            Files.write(seq, Arrays.copyOf(data, 2 * BLOCK), StandardOpenOption.APPEND);
            try (FileChannel channel = FileChannel.open(seq, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
                channel.write(ByteBuffer.wrap(data, 2 * BLOCK, 2 * BLOCK));
                channel.force(true);
            }
            assertThat(Files.readAllBytes(seq)).isEqualTo(data);
            try (FileChannel channel = FileChannel.open(seq, StandardOpenOption.WRITE)) {
                assertThatThrownBy(() -> channel.write(ByteBuffer.wrap(data, 0, BLOCK), 0))
                        .isInstanceOf(IOException.class).hasMessageContaining("append-only");
                assertThatThrownBy(() -> channel.truncate(BLOCK))
                        .isInstanceOf(IOException.class).hasMessageContaining("truncated only to 0");
                channel.truncate(0);
            }
            assertThat(Files.size(seq)).as("zone reset").isZero();
            Files.write(seq, Arrays.copyOf(data, BLOCK), StandardOpenOption.APPEND);
            try (var names = Files.list(fs.getPath("/"))) {
                assertThat(names.map(Path::toString).sorted()).containsExactly("/cnv", "/seq");
            }
        }
        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        try (FileSystem fs = FileSystems.newFileSystem(uri, Map.of())) {
            assertThat(Files.readAllBytes(fs.getPath("/seq/0"))).isEqualTo(Arrays.copyOf(data, BLOCK));
        }
    }

    /** @return a new zoned image: 8 zones of 1 MiB, zones 0 and 1 conventional (zone 0 holds the superblock) */
    private Path mkfs() {
        Path image = dir.resolve("zoned.img");
        Cli mkfs = Cli.run("mkfs", "--adapter=zonefs-like", "--size=8m", "-o", "zone-size=1m,conventional=2",
                image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        return image;
    }

    private static CompletableFuture<Cli> mount(Path image, Path mnt) {
        return CompletableFuture.supplyAsync(() -> Cli.run("mount", image.toString(), mnt.toString()));
    }

    /** @return the errno name of a 4 KiB pwrite at {@code offset} (python3's os.pwrite), or "ok" */
    private static String pwriteErrno(Path file, long offset) throws Exception {
        assumeTrue(onPath("python3"), "python3 is needed to read a pwrite's errno");
        Shell result = run(file.getParent(), "python3 -c 'import errno, os, sys\nfd = os.open(sys.argv[1], os.O_WRONLY)\n"
                + "try:\n    os.pwrite(fd, bytes(4096), int(sys.argv[2])); print(\"ok\")\n"
                + "except OSError as e:\n    print(errno.errorcode[e.errno])' " + file + " " + offset);
        return result.out().strip();
    }

    private static boolean onPath(String tool) {
        return List.of(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")).stream()
                .anyMatch(path -> Files.isExecutable(Path.of(path, tool)));
    }

    /** What a shell command printed (stdout and stderr together) and its exit status. */
    private record Shell(int exit, String out) {
    }

    private static Shell run(Path cwd, String command) throws Exception {
        Process process = new ProcessBuilder("bash", "-c", command).directory(cwd.toFile()).redirectErrorStream(true)
                .start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("'%s' ended", command).isTrue();
        return new Shell(process.exitValue(), out);
    }

    /** @return what {@code command} printed; asserts it succeeded */
    private static String sh(Path cwd, String command) throws Exception {
        Shell result = run(cwd, command);
        assertThat(result.exit()).as("'%s': %s", command, result.out()).isZero();
        return result.out();
    }

    /** @return whether /proc/self/mountinfo lists a FUSE mount on {@code mountPoint} */
    private static boolean fuseMounted(Path mountPoint) throws IOException {
        String where = " " + mountPoint.toRealPath() + " ";
        return Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8).stream()
                .anyMatch(line -> line.contains(where) && line.contains(" - fuse"));
    }

    /** Waits until {@code mountPoint} is a FUSE mount, or the mount command ended. */
    private static void awaitMounted(Path mountPoint, CompletableFuture<Cli> mount) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!fuseMounted(mountPoint)) {
            if (mount.isDone()) {
                Cli ended = mount.get();
                throw new AssertionError("iomap mount ended before mounting: " + ended.status() + " " + ended.err());
            }
            assertThat(System.nanoTime()).as("no FUSE mount on %s after 30 s", mountPoint).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    /** {@code fusermount3 -u}, lazily if the plain unmount fails; nothing if not mounted. */
    private static void unmount(Path mountPoint) throws Exception {
        if (!fuseMounted(mountPoint)) {
            return;
        }
        for (List<String> command : List.of(List.of("fusermount3", "-u", mountPoint.toString()),
                List.of("fusermount3", "-u", "-z", mountPoint.toString()))) {
            for (int attempt = 0; attempt < 20; attempt++) {
                Process process = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                if (process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0) {
                    return;
                }
                process.destroyForcibly();
                Thread.sleep(100);
            }
        }
        throw new AssertionError("fusermount3 -u " + mountPoint + " failed");
    }
}
