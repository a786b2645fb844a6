package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.XattrMode;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * POSIX attributes, held to Linux's behaviour through the {@link dev.iomap.api.IomapFileSystem} API:
 * mode, owner and group given at creation and changed by {@code setAttributes}; access and
 * modification times kept with nanoseconds from 1901 to 2262; ctime set to the current time by every
 * change of an inode (attributes, link count, name, extended attributes), mtime and ctime by writes
 * and truncates and, on a directory, by every name added or removed; btime never changing; reads
 * changing no time (mounts are {@code noatime}); and a modification time set after a buffered write
 * not undone when the data is written back. Every state is checked again after an unmount, fsck and
 * mount.
 *
 * <p>Needs {@link Capability#POSIX_ATTRIBUTES}; tests skip naming it (or the other capability they
 * need) when it is not declared, and {@link #withoutTheCapabilityAttributeChangesAreNotSupported}
 * proves the call fails then. "Now" is checked against the wall clock read just before and after the
 * operation (the earlier one rounded down to the millisecond), and "advances" strictly, after a pause
 * of a few milliseconds.
 */
public abstract class AttributesContract extends AdapterContract {
    private static final Instant MIN = Instant.parse("1901-12-13T20:45:52Z");
    private static final Instant MAX = Instant.parse("2262-04-11T23:47:16.854775807Z");

    /** An operation whose effect on times is checked. */
    @FunctionalInterface
    private interface Operation {
        void run() throws IOException;
    }

    /** The wall clock just before and just after an operation. */
    private record Window(Instant before, Instant after) {
        void assertNow(Instant time, String what) {
            assertThat(time).as(what).isBetween(before.truncatedTo(ChronoUnit.MILLIS), after);
        }
    }

    /** Waits a few milliseconds, so that a time set next is strictly later than one set before. */
    private static void pause() throws IOException {
        try {
            Thread.sleep(5);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the clock");
        }
    }

    private static Window timed(Operation operation) throws IOException {
        pause();
        Instant before = Instant.now();
        operation.run();
        return new Window(before, Instant.now());
    }

    private void file(String path, int length) throws IOException {
        writePattern(create(path), 0, length, path.hashCode());
    }

    @Test
    void withoutTheCapabilityAttributeChangesAreNotSupported() {
        assumeFalse(has(Capability.POSIX_ATTRIBUTES), "POSIX_ATTRIBUTES is declared");
        assertThatThrownBy(() -> fs.setAttributes("/", AttributeChange.none().withMode(0700)))
                .isInstanceOf(NotSupportedException.class);
    }

    @Test
    void createAndMkdirKeepModeOwnerAndGroupAndStampAllFourTimes() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES, Capability.DIRECTORIES);
        Instant before = Instant.now();
        fs.create("/f", new NewInodeAttributes(04751, 1001, 2002)).close();
        fs.mkdir("/d", new NewInodeAttributes(01777, 3, 4));
        fs.mkdir("/z", new NewInodeAttributes(0, 0, 0));
        Window window = new Window(before, Instant.now());
        for (int pass = 0; pass < 2; pass++) {
            FileStat f = fs.stat("/f");
            assertThat(List.of(f.mode(), f.uid(), f.gid())).containsExactly(04751, 1001, 2002);
            assertThat(f.posixMode()).isEqualTo(0104751);
            FileStat d = fs.stat("/d");
            assertThat(List.of(d.mode(), d.uid(), d.gid())).containsExactly(01777, 3, 4);
            assertThat(d.posixMode()).isEqualTo(041777);
            assertThat(fs.stat("/z").mode()).isZero();
            for (FileStat stat : List.of(f, d)) {
                window.assertNow(stat.btime(), "btime of inode " + stat.ino());
                assertThat(List.of(stat.atime(), stat.mtime(), stat.ctime())).as("times of a new inode")
                        .containsOnly(stat.btime());
            }
            remountChecked();
        }
    }

    @Test
    void createWithoutAttributesUsesTheDefaults() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES, Capability.DIRECTORIES);
        create("/f");
        fs.mkdir("/d");
        remountChecked();
        NewInodeAttributes file = NewInodeAttributes.defaults(FileType.REGULAR);
        FileStat f = fs.stat("/f");
        assertThat(List.of(f.mode(), f.uid(), f.gid())).containsExactly(0644, file.uid(), file.gid());
        FileStat d = fs.stat("/d");
        assertThat(List.of(d.mode(), d.uid(), d.gid())).containsExactly(0755, file.uid(), file.gid());
    }

    @Test
    void setAttributesChangesModeOwnerAndGroupAndSetsCtime() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES);
        file("/f", 100);
        FileStat before = fs.stat("/f");
        FileStat[] returned = new FileStat[1];
        Window window = timed(() -> returned[0] = fs.setAttributes("/f",
                AttributeChange.none().withMode(06700).withUid(65534).withGid(-2)));
        FileStat after = fs.stat("/f");
        assertThat(returned[0]).isEqualTo(after);
        assertThat(List.of(after.mode(), after.uid(), after.gid())).containsExactly(06700, 65534, -2);
        window.assertNow(after.ctime(), "ctime");
        assertThat(after.mtime()).isEqualTo(before.mtime());
        assertThat(after.atime()).isEqualTo(before.atime());
        assertThat(after.btime()).isEqualTo(before.btime());
        assertThat(after.size()).isEqualTo(100);
        fs.setAttributes("/f", AttributeChange.none().withGid(7));
        remountChecked();
        FileStat again = fs.stat("/f");
        assertThat(List.of(again.mode(), again.uid(), again.gid())).containsExactly(06700, 65534, 7);
        fs.setAttributes("/f", AttributeChange.none().withMode(0));
        remountChecked();
        assertThat(fs.stat("/f").mode()).isZero();
    }

    @Test
    void timesAreKeptWithNanosecondsFrom1901To2262() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES);
        List<Instant> times = List.of(MIN, MAX, Instant.EPOCH, Instant.ofEpochSecond(-1, 1),
                Instant.ofEpochSecond(-1_000_000_000L, 999_999_999), Instant.ofEpochSecond(1_700_000_000L, 123_456_789),
                Instant.ofEpochSecond(4_102_444_800L, 1), Instant.ofEpochSecond(0, 999_999_999));
        for (int i = 0; i < times.size(); i++) {
            create("/f" + i);
            Instant atime = times.get(i);
            Instant mtime = times.get(times.size() - 1 - i);
            FileStat set = fs.setAttributes("/f" + i, AttributeChange.none().withAtime(atime).withMtime(mtime));
            assertThat(List.of(set.atime(), set.mtime())).as("times of /f%d", i).containsExactly(atime, mtime);
        }
        create("/only-atime");
        Instant mtime = fs.stat("/only-atime").mtime();
        fs.setAttributes("/only-atime", AttributeChange.none().withAtime(MIN));
        remountChecked();
        for (int i = 0; i < times.size(); i++) {
            FileStat stat = fs.stat("/f" + i);
            assertThat(List.of(stat.atime(), stat.mtime())).as("times of /f%d after remount", i)
                    .containsExactly(times.get(i), times.get(times.size() - 1 - i));
        }
        assertThat(fs.stat("/only-atime").atime()).isEqualTo(MIN);
        assertThat(fs.stat("/only-atime").mtime()).isEqualTo(mtime);
    }

    @Test
    void ctimeAdvancesOnEveryInodeChangeAndBtimeNever() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES);
        file("/f", 10);
        Instant btime = fs.stat("/f").btime();
        List<String> names = new ArrayList<>();
        List<Operation> operations = new ArrayList<>();
        names.add("chmod");
        operations.add(() -> fs.setAttributes("/f", AttributeChange.none().withMode(0600)));
        names.add("chown");
        operations.add(() -> fs.setAttributes("/f", AttributeChange.none().withUid(12)));
        names.add("chgrp");
        operations.add(() -> fs.setAttributes("/f", AttributeChange.none().withGid(13)));
        names.add("utimes (atime only)");
        operations.add(() -> fs.setAttributes("/f", AttributeChange.none().withAtime(Instant.EPOCH)));
        if (has(Capability.HARD_LINKS)) {
            names.add("link");
            operations.add(() -> fs.createLink("/g", "/f"));
            names.add("unlink of the other name");
            operations.add(() -> fs.unlink("/g"));
        }
        if (has(Capability.DIRECTORIES)) {
            names.add("rename away and back");
            operations.add(() -> {
                fs.rename("/f", "/renamed");
                fs.rename("/renamed", "/f");
            });
        }
        if (has(Capability.XATTRS)) {
            names.add("setxattr");
            operations.add(() -> fs.setXattr("/f", "user.k", new byte[] {1}, XattrMode.ANY));
            names.add("removexattr");
            operations.add(() -> fs.removeXattr("/f", "user.k"));
        }
        for (int i = 0; i < operations.size(); i++) {
            FileStat before = fs.stat("/f");
            Window window = timed(operations.get(i));
            FileStat after = fs.stat("/f");
            String what = names.get(i);
            window.assertNow(after.ctime(), "ctime after " + what);
            assertThat(after.ctime()).as("ctime after %s", what).isAfter(before.ctime());
            assertThat(after.btime()).as("btime after %s", what).isEqualTo(btime);
            assertThat(after.mtime()).as("mtime after %s", what).isEqualTo(before.mtime());
        }
        if (has(Capability.DIRECTORIES)) {
            FileStat before = fs.stat("/f");
            pause();
            fs.rename("/f", "/f");
            assertThat(fs.stat("/f")).as("a rename of a name onto itself changes nothing").isEqualTo(before);
        }
        remountChecked();
        assertThat(fs.stat("/f").btime()).isEqualTo(btime);
    }

    @Test
    void writesAndTruncatesAdvanceMtimeAndCtimeTogether() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES);
        IomapFile file = create("/f");
        Instant btime = fs.stat("/f").btime();
        for (int round = 0; round < 3; round++) {
            long at = (long) round * blockSize();
            FileStat before = fs.stat("/f");
            Window window = timed(() -> writePattern(file, at, blockSize(), at));
            FileStat after = fs.stat("/f");
            window.assertNow(after.mtime(), "mtime after write " + round);
            assertThat(after.ctime()).as("ctime after write %d", round).isEqualTo(after.mtime());
            assertThat(after.mtime()).isAfter(before.mtime());
            assertThat(after.atime()).isEqualTo(before.atime());
        }
        if (has(Capability.TRUNCATE)) {
            for (long size : new long[] {blockSize() / 2, 5L * blockSize()}) {
                FileStat before = fs.stat("/f");
                Window window = timed(() -> file.truncate(size));
                FileStat after = fs.stat("/f");
                window.assertNow(after.mtime(), "mtime after truncate to " + size);
                assertThat(after.ctime()).isEqualTo(after.mtime());
                assertThat(after.mtime()).isAfter(before.mtime());
            }
        }
        file.fsync();
        FileStat synced = fs.stat("/f");
        remountChecked();
        FileStat remounted = fs.stat("/f");
        assertThat(List.of(remounted.atime(), remounted.mtime(), remounted.ctime(), remounted.btime()))
                .containsExactly(synced.atime(), synced.mtime(), synced.ctime(), btime);
    }

    @Test
    void readsChangeNoTime() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES);
        IomapFile file = create("/f");
        byte[] data = writePattern(file, 0, 3 * blockSize() + 7, 3);
        file.fsync();
        FileStat before = fs.stat("/f");
        pause();
        assertContent(file, data);
        dropCache();
        assertContent(open("/f"), data);
        fs.readdir("/");
        FileStat after = fs.stat("/f");
        assertThat(List.of(after.atime(), after.mtime(), after.ctime(), after.btime()))
                .containsExactly(before.atime(), before.mtime(), before.ctime(), before.btime());
        remountChecked();
        assertContent(open("/f"), data);
        FileStat remounted = fs.stat("/f");
        assertThat(List.of(remounted.atime(), remounted.mtime(), remounted.ctime()))
                .containsExactly(before.atime(), before.mtime(), before.ctime());
    }

    /**
     * A read's access-time update ({@link AttributeChange#accessed}, what the FUSE mount sends after a read
     * under relatime or strictatime) changes the access time alone: ctime and mtime stay, on a file and a
     * directory, also after a remount (issue 38, generic/003).
     */
    @Test
    void anAccessChangesTheAccessTimeButNotTheChangeTime() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES);
        file("/f", 100);
        fs.mkdir("/d");
        Instant accessed = Instant.parse("2030-01-02T03:04:05.123456789Z");
        for (String path : List.of("/f", "/d")) {
            FileStat before = fs.stat(path);
            pause();
            FileStat after = fs.setAttributes(path, AttributeChange.accessed(accessed));
            assertThat(after.atime()).as("atime of %s", path).isEqualTo(accessed);
            assertThat(List.of(after.mtime(), after.ctime())).as("mtime and ctime of %s", path)
                    .containsExactly(before.mtime(), before.ctime());
        }
        FileStat file = fs.stat("/f");
        FileStat dir = fs.stat("/d");
        remountChecked();
        assertThat(List.of(fs.stat("/f").atime(), fs.stat("/f").ctime(), fs.stat("/d").atime(), fs.stat("/d").ctime()))
                .containsExactly(accessed, file.ctime(), accessed, dir.ctime());
    }

    @Test
    void anMtimeSetAfterABufferedWriteSurvivesWritebackAndRemount() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES);
        Instant mtime = Instant.parse("2001-09-09T01:46:40.123456789Z");
        Instant atime = Instant.parse("1999-12-31T23:59:59.999999999Z");
        IomapFile synced = create("/synced");
        byte[] first = writePattern(synced, 0, 3 * pageSize() + 11, 1);
        fs.setAttributes("/synced", AttributeChange.none().withMtime(mtime).withAtime(atime));
        synced.fsync();
        assertThat(fs.stat("/synced").mtime()).isEqualTo(mtime);
        IomapFile unmounted = create("/unmounted");
        byte[] second = writePattern(unmounted, 0, 2 * pageSize() + 5, 2);
        fs.setAttributes("/unmounted", AttributeChange.none().withMtime(mtime).withAtime(atime));
        fs.sync();
        assertThat(fs.stat("/unmounted").mtime()).isEqualTo(mtime);
        IomapFile closed = create("/closed");
        byte[] third = writePattern(closed, 0, pageSize() + 1, 3);
        fs.setAttributes("/closed", AttributeChange.none().withMtime(mtime).withAtime(atime));
        remountChecked();
        for (String name : List.of("/synced", "/unmounted", "/closed")) {
            FileStat stat = fs.stat(name);
            assertThat(List.of(stat.mtime(), stat.atime())).as("times of %s", name).containsExactly(mtime, atime);
        }
        assertContent(open("/synced"), first);
        assertContent(open("/unmounted"), second);
        assertContent(open("/closed"), third);
    }

    @Test
    void aSymlinkHasNoModeToChangeButItsOwnerAndTimesChange() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES, Capability.SYMLINKS);
        file("/f", 1);
        fs.createSymbolicLink("/l", "f", new NewInodeAttributes(0600, 41, 42));
        FileStat link = fs.lstat("/l");
        assertThat(List.of(link.mode(), link.uid(), link.gid())).containsExactly(0777, 41, 42);
        FileStat target = fs.stat("/f");
        assertThatThrownBy(() -> fs.setAttributes("/l", AttributeChange.none().withMode(0600)))
                .isInstanceOf(NotSupportedException.class);
        Instant time = Instant.ofEpochSecond(1_234_567_890L, 5);
        fs.setAttributes("/l", AttributeChange.none().withUid(7).withGid(8).withMtime(time));
        remountChecked();
        link = fs.lstat("/l");
        assertThat(List.of(link.mode(), link.uid(), link.gid())).containsExactly(0777, 7, 8);
        assertThat(link.mtime()).isEqualTo(time);
        FileStat targetAfter = fs.stat("/f");
        assertThat(List.of(targetAfter.mode(), targetAfter.uid(), targetAfter.gid(), targetAfter.mtime()))
                .containsExactly(target.mode(), target.uid(), target.gid(), target.mtime());
    }

    @Test
    void aDirectorysMtimeAndCtimeChangeWithEveryNameAddedOrRemoved() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES, Capability.DIRECTORIES);
        fs.mkdir("/d");
        fs.mkdir("/e");
        file("/d/keep", 1);
        List<String> names = new ArrayList<>();
        List<Operation> operations = new ArrayList<>();
        List<List<String>> changed = new ArrayList<>();
        names.add("create");
        operations.add(() -> create("/d/f"));
        changed.add(List.of("/d"));
        names.add("mkdir");
        operations.add(() -> fs.mkdir("/d/sub"));
        changed.add(List.of("/d"));
        names.add("rmdir");
        operations.add(() -> fs.rmdir("/d/sub"));
        changed.add(List.of("/d"));
        names.add("rename within");
        operations.add(() -> fs.rename("/d/f", "/d/g"));
        changed.add(List.of("/d"));
        names.add("rename across");
        operations.add(() -> fs.rename("/d/g", "/e/g"));
        changed.add(List.of("/d", "/e"));
        names.add("rename over");
        operations.add(() -> fs.rename("/d/keep", "/e/g"));
        changed.add(List.of("/d", "/e"));
        names.add("unlink");
        operations.add(() -> fs.unlink("/e/g"));
        changed.add(List.of("/e"));
        if (has(Capability.SYMLINKS)) {
            names.add("symlink");
            operations.add(() -> fs.createSymbolicLink("/d/s", "x", NewInodeAttributes.defaults(FileType.SYMLINK)));
            changed.add(List.of("/d"));
        }
        if (has(Capability.HARD_LINKS)) {
            names.add("link");
            operations.add(() -> {
                create("/e/h");
                pause();
                fs.createLink("/d/h", "/e/h");
            });
            changed.add(List.of("/d", "/e"));
        }
        for (int i = 0; i < operations.size(); i++) {
            FileStat root = fs.stat("/");
            FileStat d = fs.stat("/d");
            FileStat e = fs.stat("/e");
            Window window = timed(operations.get(i));
            for (String dir : List.of("/d", "/e")) {
                FileStat before = dir.equals("/d") ? d : e;
                FileStat after = fs.stat(dir);
                if (changed.get(i).contains(dir)) {
                    window.assertNow(after.mtime(), "mtime of " + dir + " after " + names.get(i));
                    assertThat(after.ctime()).as("ctime of %s after %s", dir, names.get(i)).isEqualTo(after.mtime());
                    assertThat(after.mtime()).isAfter(before.mtime());
                } else {
                    assertThat(List.of(after.mtime(), after.ctime())).as("times of %s after %s", dir, names.get(i))
                            .containsExactly(before.mtime(), before.ctime());
                }
                assertThat(after.btime()).isEqualTo(before.btime());
            }
            FileStat rootAfter = fs.stat("/");
            assertThat(List.of(rootAfter.mtime(), rootAfter.ctime())).as("times of / after %s", names.get(i))
                    .containsExactly(root.mtime(), root.ctime());
        }
        FileStat d = fs.stat("/d");
        remountChecked();
        assertThat(fs.stat("/d").mtime()).isEqualTo(d.mtime());
        assertThat(fs.stat("/d").ctime()).isEqualTo(d.ctime());
    }

    @Test
    void anEmptyChangeChangesNothing() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES);
        file("/f", 5);
        FileStat before = fs.stat("/f");
        pause();
        assertThat(fs.setAttributes("/f", AttributeChange.none())).isEqualTo(before);
        assertThat(fs.stat("/f")).isEqualTo(before);
    }
}
