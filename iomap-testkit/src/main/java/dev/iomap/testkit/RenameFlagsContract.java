package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.RenameFlag;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * rename with {@code renameat2}'s flags (issue 13). NOREPLACE refuses an existing target and changes
 * nothing; EXCHANGE swaps two existing names atomically (files, directories, across directories) and
 * refuses a directory with a name in its own subtree. Every change is checked again after an unmount,
 * fsck and mount.
 *
 * <p>NOREPLACE needs {@link Capability#RENAME} (rename itself, implied by
 * {@link Capability#DIRECTORIES}; a flat namespace runs the tests within the root); EXCHANGE needs
 * {@link Capability#RENAME_EXCHANGE}. Without them, {@link #withoutTheCapabilitiesFlaggedRenameIsNotSupported}
 * proves the operation fails with {@link NotSupportedException}.
 */
public abstract class RenameFlagsContract extends AdapterContract {
    private static final Set<RenameFlag> NOREPLACE = EnumSet.of(RenameFlag.NOREPLACE);
    private static final Set<RenameFlag> EXCHANGE = EnumSet.of(RenameFlag.EXCHANGE);

    private void file(String path, String content) throws IOException {
        write(create(path), 0, content.getBytes(StandardCharsets.UTF_8));
    }

    private void assertFile(String path, String content) throws IOException {
        assertContent(open(path), content.getBytes(StandardCharsets.UTF_8));
    }

    private long ino(String path) throws IOException {
        return fs.stat(path).ino();
    }

    /** @return whether the directory's link count is 2 plus its subdirectories (as in xfs) */
    private boolean countsSubdirectories(String dir) throws IOException {
        long subdirectories = fs.readdir(dir).stream().filter(entry -> entry.type() == FileType.DIRECTORY).count();
        return fs.stat(dir).linkCount() == 2 + subdirectories;
    }

    private static final NewInodeAttributes OWNER = new NewInodeAttributes(0, 1000, 100);

    private DirEntry entry(String dir, String name) throws IOException {
        return fs.readdir(dir).stream().filter(entry -> entry.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void bothFlagsTogetherAreInvalid() {
        assertThatThrownBy(() -> fs.rename("/a", "/b", EnumSet.allOf(RenameFlag.class)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void withoutTheCapabilitiesFlaggedRenameIsNotSupported() {
        assumeFalse(has(Capability.RENAME_EXCHANGE), "exchange is supported");
        assertThatThrownBy(() -> fs.rename("/a", "/b", EXCHANGE)).isInstanceOf(NotSupportedException.class);
        if (!has(Capability.RENAME)) {
            assertThatThrownBy(() -> fs.rename("/a", "/b", NOREPLACE)).isInstanceOf(NotSupportedException.class);
        }
    }

    @Test
    void withoutSpecialFilesAWhiteoutIsNotSupported() {
        assumeFalse(has(Capability.SPECIAL_FILES), "SPECIAL_FILES is declared");
        assertThatThrownBy(() -> fs.rename("/a", "/b", EnumSet.of(RenameFlag.WHITEOUT), OWNER))
                .isInstanceOf(NotSupportedException.class);
    }

    /** RENAME_WHITEOUT: the old name becomes a character device 0:0 with mode 0, the caller's, in one change. */
    @Test
    void aWhiteoutIsLeftAtTheOldNameReplacingOrNot() throws IOException {
        assumeCapable(Capability.RENAME, Capability.SPECIAL_FILES, Capability.POSIX_ATTRIBUTES, Capability.DIRECTORIES);
        file("/a", "alpha");
        file("/b", "bravo");
        fs.mkdir("/d");
        file("/d/c", "charlie");
        long a = ino("/a");
        fs.rename("/a", "/b", EnumSet.of(RenameFlag.WHITEOUT), OWNER);
        fs.rename("/d/c", "/c", EnumSet.of(RenameFlag.WHITEOUT, RenameFlag.NOREPLACE), OWNER);
        assertThatThrownBy(() -> fs.rename("/b", "/c", EnumSet.of(RenameFlag.WHITEOUT, RenameFlag.NOREPLACE), OWNER))
                .isInstanceOf(FileAlreadyExistsException.class);
        for (int round = 0; round < 2; round++) {
            assertFile("/b", "alpha");
            assertFile("/c", "charlie");
            assertThat(ino("/b")).isEqualTo(a);
            for (String whiteout : new String[] {"/a", "/d/c"}) {
                FileStat stat = fs.lstat(whiteout);
                assertThat(stat.type()).as(whiteout).isEqualTo(FileType.CHARACTER_DEVICE);
                assertThat(stat.rdev()).as(whiteout).isZero();
                assertThat(stat.mode()).as(whiteout).isZero();
                assertThat(List.of(stat.uid(), stat.gid())).as(whiteout).containsExactly(OWNER.uid(), OWNER.gid());
                assertThat(stat.linkCount()).as(whiteout).isEqualTo(1);
            }
            assertThat(entry("/", "a").type()).isEqualTo(FileType.CHARACTER_DEVICE);
            assertThat(fs.readdir("/d")).extracting(DirEntry::name).containsExactly("c");
            remountChecked();
        }
    }

    /**
     * xfstests generic/626: on a file system full to the last block and inode, each rename with a whiteout
     * either happens whole or fails {@link dev.iomap.api.NoSpaceException} having changed nothing; fsck
     * finds the image clean either way.
     */
    @Test
    void whiteoutRenamesOnAFullFileSystemHappenWholeOrNotAtAll() throws IOException {
        assumeCapable(Capability.RENAME, Capability.SPECIAL_FILES, Capability.DIRECTORIES);
        int files = 64;
        fs.mkdir("/src");
        for (int i = 0; i < files; i++) {
            create("/src/f" + i).close();
        }
        long perFile = Math.max(blockSize(), withinFileLimit(4L << 20) / blockSize() * blockSize());
        DeviceFill.untilNoSpace(fs, "/fill-", perFile, (int) Math.min(perFile, 1 << 20), blockSize(), 7, true,
                2 * device.capacity());
        for (int i = 0; ; i++) {
            try {
                create("/src/more" + i).close();
            } catch (dev.iomap.api.NoSpaceException e) {
                break;
            }
        }
        int moved = 0;
        for (int i = 0; i < files; i++) {
            try {
                fs.rename("/src/f" + i, "/src/g" + i, EnumSet.of(RenameFlag.WHITEOUT), OWNER);
                moved++;
            } catch (dev.iomap.api.NoSpaceException e) {
                assertThat(fs.lstat("/src/f" + i).type()).as("refused: nothing changed").isEqualTo(FileType.REGULAR);
            }
        }
        skipFinalCheck();
        remountChecked();
        int whiteouts = 0;
        for (int i = 0; i < files; i++) {
            FileType type = fs.lstat("/src/f" + i).type();
            boolean renamed = type == FileType.CHARACTER_DEVICE;
            whiteouts += renamed ? 1 : 0;
            String moveTarget = "g" + i;
            assertThat(fs.readdir("/src").stream().map(DirEntry::name).anyMatch(moveTarget::equals))
                    .as("f%d renamed: %s", i, renamed).isEqualTo(renamed);
        }
        assertThat(whiteouts).isEqualTo(moved);
    }

    @Test
    void aWhiteoutOfADirectoryMovesItAndLeavesTheWhiteout() throws IOException {
        assumeCapable(Capability.RENAME, Capability.SPECIAL_FILES, Capability.DIRECTORIES);
        fs.mkdir("/p");
        fs.mkdir("/p/sub");
        file("/p/sub/f", "foxtrot");
        fs.mkdir("/q");
        fs.rename("/p/sub", "/q/sub", EnumSet.of(RenameFlag.WHITEOUT), OWNER);
        remountChecked();
        assertFile("/q/sub/f", "foxtrot");
        assertThat(fs.lstat("/p/sub").type()).isEqualTo(FileType.CHARACTER_DEVICE);
        if (countsSubdirectories("/p")) {
            assertThat(fs.stat("/p").linkCount()).isEqualTo(2);
            assertThat(fs.stat("/q").linkCount()).isEqualTo(3);
        }
        fs.unlink("/p/sub");
        fs.rmdir("/p");
        remountChecked();
        assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactlyInAnyOrder("q");
    }

    @Test
    void noreplaceRefusesAnExistingTargetAndChangesNothing() throws IOException {
        assumeCapable(Capability.RENAME);
        file("/a", "alpha");
        file("/b", "bravo");
        long a = ino("/a");
        long b = ino("/b");
        assertThatThrownBy(() -> fs.rename("/a", "/b", NOREPLACE)).isInstanceOf(FileAlreadyExistsException.class);
        if (has(Capability.DIRECTORIES)) {
            fs.mkdir("/d");
            assertThatThrownBy(() -> fs.rename("/a", "/d", NOREPLACE)).isInstanceOf(FileAlreadyExistsException.class);
        }
        remountChecked();
        assertFile("/a", "alpha");
        assertFile("/b", "bravo");
        assertThat(ino("/a")).isEqualTo(a);
        assertThat(ino("/b")).isEqualTo(b);
    }

    @Test
    void noreplaceRenamesToAnAbsentName() throws IOException {
        assumeCapable(Capability.RENAME);
        file("/a", "alpha");
        String target = "/b";
        if (has(Capability.DIRECTORIES)) {
            fs.mkdir("/d");
            target = "/d/b";
        }
        long a = ino("/a");
        fs.rename("/a", target, NOREPLACE);
        remountChecked();
        assertThatThrownBy(() -> fs.stat("/a")).isInstanceOf(NoSuchFileException.class);
        assertFile(target, "alpha");
        assertThat(ino(target)).isEqualTo(a);
    }

    @Test
    void noreplaceOfAMissingSourceIsNoSuchFile() throws IOException {
        assumeCapable(Capability.RENAME);
        assertThatThrownBy(() -> fs.rename("/missing", "/b", NOREPLACE)).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.stat("/b")).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void exchangeSwapsTwoFiles() throws IOException {
        assumeCapable(Capability.DIRECTORIES, Capability.RENAME_EXCHANGE);
        fs.mkdir("/d");
        file("/a", "alpha");
        file("/d/b", "bravo, longer");
        long a = ino("/a");
        long b = ino("/d/b");
        fs.rename("/a", "/d/b", EXCHANGE);
        assertFile("/a", "bravo, longer");
        remountChecked();
        assertFile("/a", "bravo, longer");
        assertFile("/d/b", "alpha");
        assertThat(ino("/a")).isEqualTo(b);
        assertThat(ino("/d/b")).isEqualTo(a);
        assertThat(fs.stat("/a").linkCount()).isEqualTo(1);
        assertThat(fs.stat("/d/b").linkCount()).isEqualTo(1);
    }

    @Test
    void exchangeSwapsAFileAndADirectoryAcrossParents() throws IOException {
        assumeCapable(Capability.DIRECTORIES, Capability.RENAME_EXCHANGE);
        fs.mkdir("/p");
        fs.mkdir("/q");
        file("/p/f", "file");
        fs.mkdir("/q/d");
        file("/q/d/inside", "inside");
        boolean counts = countsSubdirectories("/p") && countsSubdirectories("/q");
        long dir = ino("/q/d");
        fs.rename("/p/f", "/q/d", EXCHANGE);
        remountChecked();
        assertThat(entry("/p", "f")).isEqualTo(new DirEntry("f", dir, FileType.DIRECTORY));
        assertThat(entry("/q", "d").type()).isEqualTo(FileType.REGULAR);
        assertFile("/q/d", "file");
        assertFile("/p/f/inside", "inside");
        assertThat(countsSubdirectories("/p")).isEqualTo(counts);
        assertThat(countsSubdirectories("/q")).isEqualTo(counts);
        // The moved directory's parent pointer follows: it can be emptied and removed from its new parent.
        fs.unlink("/p/f/inside");
        fs.rmdir("/p/f");
        remountChecked();
        assertThat(fs.readdir("/p")).isEmpty();
    }

    @Test
    void exchangeSwapsTwoDirectoriesInDifferentParents() throws IOException {
        assumeCapable(Capability.DIRECTORIES, Capability.RENAME_EXCHANGE);
        fs.mkdir("/p");
        fs.mkdir("/q");
        fs.mkdir("/p/x");
        fs.mkdir("/q/y");
        fs.mkdir("/q/y/deeper");
        file("/p/x/one", "one");
        file("/q/y/two", "two");
        long x = ino("/p/x");
        long y = ino("/q/y");
        int pLinks = fs.stat("/p").linkCount();
        int qLinks = fs.stat("/q").linkCount();
        fs.rename("/p/x", "/q/y", EXCHANGE);
        remountChecked();
        assertThat(ino("/p/x")).isEqualTo(y);
        assertThat(ino("/q/y")).isEqualTo(x);
        assertFile("/p/x/two", "two");
        assertFile("/q/y/one", "one");
        assertThat(fs.stat("/p/x/deeper").type()).isEqualTo(FileType.DIRECTORY);
        assertThat(fs.stat("/p").linkCount()).isEqualTo(pLinks);
        assertThat(fs.stat("/q").linkCount()).isEqualTo(qLinks);
        // Moving each back under its first parent needs the right parent pointers to stay consistent.
        fs.rename("/p/x", "/x");
        fs.rename("/q/y", "/y");
        remountChecked();
        assertFile("/x/two", "two");
        assertFile("/y/one", "one");
    }

    @Test
    void exchangeWithAMissingNameIsNoSuchFileAndChangesNothing() throws IOException {
        assumeCapable(Capability.DIRECTORIES, Capability.RENAME_EXCHANGE);
        file("/a", "alpha");
        assertThatThrownBy(() -> fs.rename("/a", "/missing", EXCHANGE)).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.rename("/missing", "/a", EXCHANGE)).isInstanceOf(NoSuchFileException.class);
        remountChecked();
        assertFile("/a", "alpha");
        assertThatThrownBy(() -> fs.stat("/missing")).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void exchangeIntoItsOwnSubtreeIsInvalid() throws IOException {
        assumeCapable(Capability.DIRECTORIES, Capability.RENAME_EXCHANGE);
        fs.mkdir("/d");
        fs.mkdir("/d/e");
        file("/d/e/f", "f");
        assertThatThrownBy(() -> fs.rename("/d", "/d/e/f", EXCHANGE)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> fs.rename("/d/e", "/d", EXCHANGE)).isInstanceOf(IllegalArgumentException.class);
        remountChecked();
        assertFile("/d/e/f", "f");
    }

    @Test
    void exchangeOfANameWithItselfChangesNothing() throws IOException {
        assumeCapable(Capability.DIRECTORIES, Capability.RENAME_EXCHANGE);
        file("/a", "alpha");
        long a = ino("/a");
        fs.rename("/a", "/a", EXCHANGE);
        remountChecked();
        assertFile("/a", "alpha");
        assertThat(ino("/a")).isEqualTo(a);
    }
}
