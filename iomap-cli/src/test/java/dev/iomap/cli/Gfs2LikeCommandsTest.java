package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code iomap mkfs, fsck, stat, bench} and {@code mount} with {@code --adapter gfs2-like} on a sparse
 * temporary image: its format properties ({@code -o journals=2}), its mount options ({@code -O
 * data=journal}, {@code -O journal=K}) and its counters (glocks, journal commits) in stat's and bench's
 * reports. Counts that depend on timing (how many commits a timestamp change caused) are checked only
 * to be there; the rest exactly.
 */
class Gfs2LikeCommandsTest {
    /** 64 random 4 KiB writes, each followed by fdatasync. */
    private static final String TINY = String.join("\n",
            "[global]", "ioengine=psync", "rw=randwrite", "bs=4k", "size=256k", "fdatasync=1", "[tiny]");
    /** stat's counter line on a fresh mount: only the checkpoint the mount's journal replay made. */
    private static final String FRESH_COUNTERS = "adapter ctrs : glock.acquisitions=0, glock.cachedHolds=0,"
            + " glock.demotions=0, glock.grants=0, glock.pagesInvalidated=0, journal.blocksLogged=0, journal.checkpoints=1, journal.commits=0,"
            + " journal.dataCommits=0, trim.bytes=0\n";

    @TempDir
    Path dir;

    private Path mkfs() {
        Path image = dir.resolve("gfs2.img");
        Cli mkfs = Cli.run("mkfs", "--adapter=gfs2-like", "-o", "journals=2", "--size=32m", image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        assertThat(mkfs.out()).isEqualTo(image + ": gfs2-like filesystem, 33554432 bytes, block size 4096,"
                + " 8192 blocks (7662 free)\n");
        return image;
    }

    private String job() throws IOException {
        return Files.writeString(dir.resolve("tiny.fio"), TINY + "\n").toString();
    }

    @Test
    void mkfsWithTwoJournalsThenFsckAndStatShowThemAndTheCounters() throws IOException {
        Path image = mkfs();
        assertThat(Files.size(image)).isEqualTo(32L << 20);

        Cli fsck = Cli.run("fsck", image.toString());
        Cli stat = Cli.run("stat", image.toString());
        Cli second = Cli.run("stat", "-O", "data=journal,journal=1", image.toString());
        Cli third = Cli.run("stat", "-O", "journal=2", image.toString());

        assertThat(fsck.status()).as(fsck.err()).isZero();
        assertThat(fsck.out()).isEqualTo(image + ": clean (gfs2-like, 4096-byte blocks; checked 1 dinodes,"
                + " 8192 blocks in 8 resource groups, 2 journals)\n");
        assertThat(stat.status()).as(stat.err()).isZero();
        assertThat(stat.out()).contains("\nadapter      : gfs2-like (capabilities: [DIRECTORIES, RENAME, FALLOCATE,")
                .contains("JOURNALED_DATA, INODE_FLAGS, DIRECT_IO])\nblock size   : 4096\n")
                .contains("\nblocks       : 8192 total, 7662 free, 530 used (6.5%), 2120KiB of 32.0MiB\n")
                .contains("\nroot         : 0 entries\n")
                .endsWith("\n" + FRESH_COUNTERS)
                .doesNotContain("fs options");
        assertThat(second.status()).as(second.err()).isZero();
        assertThat(second.out()).contains("\nfs options   : data=journal,journal=1\n").endsWith("\n" + FRESH_COUNTERS);
        assertThat(third.status()).isEqualTo(1);
        assertThat(third.err()).isEqualTo("iomap: journal 2 does not exist: the filesystem has 2 journals\n");
        assertThat(Cli.run("fsck", image.toString()).out()).isEqualTo(fsck.out());
    }

    @Test
    void mkfsRefusesFormatPropertiesItDoesNotTakeAndWritesNothing() {
        Path image = dir.resolve("refused.img");

        Cli tooMany = Cli.run("mkfs", "--adapter=gfs2-like", "-o", "journals=65", "--size=32m", image.toString());
        Cli unknown = Cli.run("mkfs", "--adapter=gfs2-like", "-o", "nosuch=1", "--size=32m", image.toString());

        assertThat(tooMany.status()).isEqualTo(1);
        assertThat(tooMany.err()).isEqualTo("iomap: gfs2-like journals=65 is outside [1, 64]\n");
        assertThat(unknown.status()).isEqualTo(1);
        assertThat(unknown.err()).isEqualTo("iomap: gfs2-like has no format property 'nosuch'"
                + " (known: journalblocks, journals, rgblocks)\n");
        assertThat(image).doesNotExist();
    }

    @Test
    void benchOnTheImageReportsGlocksAndJournaledDataCommits() throws IOException {
        Path image = mkfs();
        String job = job();

        Cli ordered = Cli.run("bench", "--progress=never", "--no-flusher", "--force", "--device=file:" + image, job);
        Cli journaled = Cli.run("bench", "--progress=never", "--no-flusher", "--force", "--device=file:" + image,
                "-O", "data=journal", job);

        assertThat(ordered.status()).as(ordered.err()).isZero();
        assertThat(ordered.out()).contains("iomap stats (group 0): adapter=gfs2-like, device=file:")
                .contains("\n  app      : written=256KiB, read=0B\n")
                .containsPattern("\n  device   : written=[0-9]+KiB \\(data=256KiB, metadata=[1-9][0-9]*KiB\\),")
                .containsPattern("\n  adapter  : glock.acquisitions=64, glock.cachedHolds=[0-9]+, journal.blocksLogged=[1-9][0-9]*,"
                        + " journal.commits=[1-9][0-9]*\n");
        assertThat(journaled.status()).as(journaled.err()).isZero();
        assertThat(journaled.out()).contains(", fs options data=journal\n")
                .containsPattern("\n  adapter  : glock.acquisitions=64, glock.cachedHolds=[0-9]+, journal.blocksLogged=[1-9][0-9]*,"
                        + " journal.commits=[1-9][0-9]*, journal.dataCommits=64\n");
        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as(fsck.out()).isZero();
        assertThat(fsck.out()).startsWith(image + ": clean (gfs2-like, 4096-byte blocks;");
    }

    @Test
    void compareOrderedAndJournaledDataInOneTable() throws IOException {
        Cli cli = Cli.run("bench", "--progress=never", "--device=ram:64m", "--no-flusher", "--compare",
                "adapter=gfs2-like,gfs2-like:data=journal", job());

        assertThat(cli.status()).as(cli.err()).isZero();
        assertThat(cli.err()).isEqualTo("run 1/2: adapter=gfs2-like\nrun 2/2: adapter=gfs2-like:data=journal\n");
        assertThat(cli.out()).startsWith("compare adapter: gfs2-like vs gfs2-like:data=journal (block size 4096,")
                .containsPattern("\napp written \\(MiB\\) +0\\.25 +0\\.25 +1\\.000\n")
                .containsPattern("\ndata written \\(MiB\\) +0\\.25 +0\\.25 +1\\.000\n")
                .containsPattern("\nadapter: glock\\.acquisitions +64 +64 +1\\.000\n")
                .containsPattern("\nadapter: journal\\.dataCommits +0 +64 +-\n");
    }

    @Test
    void mountServesTheImageThroughFuseWithItsOptions() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "FUSE mount test skipped: /dev/fuse is absent");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/fusermount3")) || Files.isExecutable(Path.of("/bin/fusermount3")),
                "FUSE mount test skipped: fusermount3 is not installed");
        Path image = mkfs();
        Path mountPoint = Files.createDirectory(dir.resolve("mnt"));
        CompletableFuture<Cli> mount = CompletableFuture.supplyAsync(() -> Cli.run("mount", "-O",
                "data=journal,journal=1", image.toString(), mountPoint.toString()));
        try {
            awaitMounted(mountPoint, mount);
            Files.writeString(mountPoint.resolve("hello"), "through FUSE, journaled\n");
            Files.write(mountPoint.resolve("big"), new byte[3 * 4096 + 1]);
            try (var names = Files.list(mountPoint)) {
                assertThat(names.map(p -> p.getFileName().toString()).sorted()).containsExactly("big", "hello");
            }
        } finally {
            unmount(mountPoint);
        }
        Cli result = mount.get(60, TimeUnit.SECONDS);
        assertThat(result.status()).as(result.err()).isZero();

        Cli fsck = Cli.run("fsck", image.toString());
        Cli stat = Cli.run("stat", "-O", "journal=1", image.toString());
        assertThat(fsck.status()).as(fsck.out()).isZero();
        assertThat(fsck.out()).isEqualTo(image + ": clean (gfs2-like, 4096-byte blocks; checked 3 dinodes,"
                + " 8192 blocks in 8 resource groups, 2 journals)\n");
        assertThat(stat.out()).contains("\nroot         : 2 entries\n");
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

    /** {@code fusermount3 -u}, lazily if the plain unmount fails (a test that failed midway); nothing if not mounted. */
    private static void unmount(Path mountPoint) throws Exception {
        if (!fuseMounted(mountPoint)) {
            return;
        }
        for (List<String> command : List.of(List.of("fusermount3", "-u", mountPoint.toString()),
                List.of("fusermount3", "-u", "-z", mountPoint.toString()))) {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0) {
                return;
            }
            process.destroyForcibly();
        }
        throw new AssertionError("fusermount3 -u " + mountPoint + " failed");
    }
}
