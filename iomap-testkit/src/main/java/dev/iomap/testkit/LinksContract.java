package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.api.SymlinkLoopException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Symbolic and hard links, held to Linux's behaviour through the {@link IomapFileSystem} API: targets
 * kept byte for byte, path resolution through links ({@code ..} physical, absolute targets from the
 * root, {@value IomapFileSystem#MAX_SYMLINK_FOLLOWS} follows and then ELOOP), {@code lstat} against
 * {@code stat}, and hard links counted, sharing one inode, keeping an unlinked open file readable,
 * refusing directories. Every state is checked again after an unmount, fsck and mount.
 *
 * <p>Symbolic-link tests need {@link Capability#SYMLINKS}, hard-link tests {@link Capability#HARD_LINKS}
 * (and rename or mkdir also {@link Capability#DIRECTORIES}); without them each test is skipped naming
 * the capability, and {@link #withoutTheCapabilitiesLinksAreNotSupported} proves the calls fail.
 */
public abstract class LinksContract extends AdapterContract {
    private static final NewInodeAttributes LINK = NewInodeAttributes.defaults(FileType.SYMLINK);

    private void file(String path, String content) throws IOException {
        write(create(path), 0, bytes(content));
    }

    private static byte[] bytes(String content) {
        return content.getBytes(StandardCharsets.UTF_8);
    }

    private void assertFile(String path, String content) throws IOException {
        assertContent(open(path), bytes(content));
    }

    private void symlink(String link, String target) throws IOException {
        fs.createSymbolicLink(link, target, LINK);
    }

    private long ino(String path) throws IOException {
        return fs.lstat(path).ino();
    }

    @Test
    void withoutTheCapabilitiesLinksAreNotSupported() {
        assumeFalse(has(Capability.SYMLINKS) && has(Capability.HARD_LINKS),
                "SYMLINKS and HARD_LINKS are both declared");
        if (!has(Capability.SYMLINKS)) {
            assertThatThrownBy(() -> fs.createSymbolicLink("/l", "t", LINK))
                    .isInstanceOf(NotSupportedException.class);
            assertThatThrownBy(() -> fs.readSymbolicLink("/l")).isInstanceOf(NotSupportedException.class);
        }
        if (!has(Capability.HARD_LINKS)) {
            assertThatThrownBy(() -> fs.createLink("/b", "/a")).isInstanceOf(NotSupportedException.class);
        }
    }

    // ---- symbolic links ----

    @Test
    void aSymlinkKeepsItsTargetByteForByte() throws IOException {
        assumeCapable(Capability.SYMLINKS);
        String notUtf8 = FileNames.decode(new byte[] {'x', (byte) 0xff, '/', (byte) 0xc3, 'y'});
        StringBuilder longest = new StringBuilder();
        while (longest.length() < FileNames.MAX_TARGET_BYTES - 2) {
            longest.append("ab/");
        }
        longest.setLength(FileNames.MAX_TARGET_BYTES - 2);
        longest.append("\u00e9");
        List<String> targets = List.of("t", "../up/./x//y/", "/absolute/path", "caf\u00e9 \uD83D\uDE00", notUtf8,
                longest.toString());
        assertThat(FileNames.encode(longest.toString())).hasSize(FileNames.MAX_TARGET_BYTES);
        for (int i = 0; i < targets.size(); i++) {
            symlink("/l" + i, targets.get(i));
        }
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < targets.size(); i++) {
                String link = "/l" + i;
                assertThat(fs.readSymbolicLink(link)).as("target of %s", link).isEqualTo(targets.get(i));
                FileStat stat = fs.lstat(link);
                assertThat(stat.type()).isEqualTo(FileType.SYMLINK);
                assertThat(stat.size()).as("size of %s", link).isEqualTo(FileNames.encode(targets.get(i)).length);
                assertThat(stat.linkCount()).isEqualTo(1);
                assertThat(stat.mode()).isEqualTo(0777);
                assertThat(fs.readdir("/")).contains(new DirEntry("l" + i, stat.ino(), FileType.SYMLINK));
            }
            remountChecked();
        }
    }

    @Test
    void anEmptyOrTooLongTargetIsRefusedAndCreatesNothing() throws IOException {
        assumeCapable(Capability.SYMLINKS);
        assertThatThrownBy(() -> symlink("/empty", "")).isInstanceOf(InvalidPathException.class);
        String tooLong = "a".repeat(FileNames.MAX_TARGET_BYTES - 1) + "\u00e9";
        assertThatThrownBy(() -> symlink("/long", tooLong)).isInstanceOf(InvalidPathException.class)
                .hasMessageContaining("longer than 4095 bytes");
        assertThatThrownBy(() -> symlink("/nul", "a\0b")).isInstanceOf(InvalidPathException.class);
        remountChecked();
        assertThat(fs.readdir("/")).isEmpty();
    }

    @Test
    void aSymlinkOntoAnExistingNameIsRefusedAndReadlinkOfAFileIsNotALink() throws IOException {
        assumeCapable(Capability.SYMLINKS);
        file("/f", "file");
        symlink("/l", "f");
        assertThatThrownBy(() -> symlink("/f", "x")).isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> symlink("/l", "x")).isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> fs.create("/l")).isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> fs.readSymbolicLink("/f")).isInstanceOf(NotLinkException.class);
        assertThatThrownBy(() -> fs.readSymbolicLink("/missing")).isInstanceOf(NoSuchFileException.class);
        remountChecked();
        assertFile("/f", "file");
        assertThat(fs.readSymbolicLink("/l")).isEqualTo("f");
    }

    @Test
    void statFollowsTheLastLinkAndLstatDoesNot() throws IOException {
        assumeCapable(Capability.SYMLINKS);
        file("/f", "ten bytes!");
        symlink("/l", "f");
        symlink("/ll", "/l");
        for (int pass = 0; pass < 2; pass++) {
            FileStat target = fs.stat("/f");
            assertThat(fs.stat("/l")).isEqualTo(target);
            assertThat(fs.stat("/ll")).isEqualTo(target);
            assertThat(fs.lstat("/f")).isEqualTo(target);
            FileStat link = fs.lstat("/l");
            assertThat(link.type()).isEqualTo(FileType.SYMLINK);
            assertThat(link.ino()).isNotEqualTo(target.ino());
            assertThat(link.size()).isEqualTo(1);
            assertThat(fs.lstat("/ll").size()).isEqualTo(2);
            assertThat(target.size()).isEqualTo(10);
            remountChecked();
        }
    }

    @Test
    void pathsResolveThroughLinksToDirectoriesRelativeAndAbsolute() throws IOException {
        assumeCapable(Capability.SYMLINKS, Capability.DIRECTORIES);
        fs.mkdir("/d");
        fs.mkdir("/d/e");
        file("/d/e/f", "deep");
        symlink("/rel", "d");
        symlink("/abs", "/d/e");
        symlink("/d/e/back", "../../rel/e");
        symlink("/dots", "./d/./e/");
        for (int pass = 0; pass < 2; pass++) {
            assertFile("/rel/e/f", "deep");
            assertFile("/abs/f", "deep");
            assertFile("/d/e/back/f", "deep");
            assertFile("/d/e/back/back/back/f", "deep");
            assertFile("/dots/f", "deep");
            assertThat(fs.readdir("/rel")).isEqualTo(fs.readdir("/d"));
            assertThat(fs.stat("/abs").ino()).isEqualTo(fs.stat("/d/e").ino());
            remountChecked();
        }
        // Names are created, written and removed in the directory a link leads to.
        file("/rel/e/new", "made through a link");
        fs.mkdir("/abs/sub");
        assertFile("/d/e/new", "made through a link");
        assertThat(fs.stat("/d/e/sub").type()).isEqualTo(FileType.DIRECTORY);
        fs.unlink("/abs/new");
        fs.rmdir("/rel/e/sub");
        remountChecked();
        assertThat(fs.readdir("/d/e").stream().map(DirEntry::name)).containsExactly("back", "f");
    }

    @Test
    void dotDotInATargetIsThePhysicalParent() throws IOException {
        assumeCapable(Capability.SYMLINKS, Capability.DIRECTORIES);
        fs.mkdir("/a");
        fs.mkdir("/a/b");
        file("/a/y", "physical");
        file("/y", "lexical");
        symlink("/l1", "a/b");
        symlink("/a/b/l2", "../y");
        remountChecked();
        // "/l1/l2" is a/b/../y = /a/y, not /l1/../y = /y.
        assertFile("/l1/l2", "physical");
        assertThat(fs.realPath("/l1/l2")).isEqualTo("/a/y");
        // ".." of the root is the root.
        symlink("/a/up", "../../../../y");
        assertFile("/a/up", "lexical");
    }

    @Test
    void aDanglingLinkIsNoSuchFileWhenFollowedButExists() throws IOException {
        assumeCapable(Capability.SYMLINKS);
        symlink("/dangling", "missing");
        symlink("/deeper", "missing/deeper/still");
        remountChecked();
        for (String link : List.of("/dangling", "/deeper")) {
            assertThatThrownBy(() -> fs.stat(link)).isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> fs.open(link)).isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> fs.realPath(link)).isInstanceOf(NoSuchFileException.class);
            assertThat(fs.lstat(link).type()).isEqualTo(FileType.SYMLINK);
        }
        assertThatThrownBy(() -> fs.create("/dangling/x")).isInstanceOf(NoSuchFileException.class);
        file("/missing", "now it exists");
        assertFile("/dangling", "now it exists");
        assertThatThrownBy(() -> fs.stat("/deeper")).isInstanceOf(NotDirectoryException.class);
        // A trailing slash in a target names a directory.
        symlink("/slash", "missing/");
        assertThatThrownBy(() -> fs.stat("/slash")).isInstanceOf(NotDirectoryException.class);
    }

    @Test
    void loopsFailWithEloopAfterFortyFollows() throws IOException {
        assumeCapable(Capability.SYMLINKS);
        symlink("/loop1", "loop2");
        symlink("/loop2", "/loop1");
        symlink("/self", "self");
        file("/f", "end");
        // /c0 -> c1 -> ... -> c40 -> f: 41 links from /c0, 40 from /c1.
        int limit = IomapFileSystem.MAX_SYMLINK_FOLLOWS;
        for (int i = 0; i <= limit; i++) {
            symlink("/c" + i, i == limit ? "f" : "c" + (i + 1));
        }
        remountChecked();
        for (String loop : List.of("/loop1", "/loop2", "/self", "/c0", "/loop1/x")) {
            assertThatThrownBy(() -> fs.stat(loop)).as(loop).isInstanceOf(SymlinkLoopException.class);
            assertThatThrownBy(() -> fs.open(loop)).as(loop).isInstanceOf(SymlinkLoopException.class);
        }
        assertThatThrownBy(() -> fs.create("/self/x")).isInstanceOf(SymlinkLoopException.class);
        assertThat(fs.lstat("/self").type()).isEqualTo(FileType.SYMLINK);
        assertFile("/c1", "end");
        assertThat(fs.realPath("/c1")).isEqualTo("/f");
    }

    @Test
    void openingThroughALinkReadsAndWritesTheTarget() throws IOException {
        assumeCapable(Capability.SYMLINKS);
        file("/f", "0123456789");
        symlink("/l", "f");
        IomapFile through = open("/l");
        assertThat(through.ino()).isEqualTo(ino("/f"));
        write(through, 10, bytes("abc"));
        through.fsync();
        remountChecked();
        assertFile("/f", "0123456789abc");
        assertThat(fs.lstat("/l").size()).isEqualTo(1);
    }

    @Test
    void unlinkAndRenameActOnTheLinkNotItsTarget() throws IOException {
        assumeCapable(Capability.SYMLINKS, Capability.DIRECTORIES);
        file("/f", "target");
        fs.mkdir("/d");
        symlink("/l", "f");
        symlink("/ld", "d");
        fs.rename("/l", "/m");
        fs.unlink("/ld");
        remountChecked();
        assertThat(fs.readSymbolicLink("/m")).isEqualTo("f");
        assertFile("/m", "target");
        fs.unlink("/m");
        remountChecked();
        assertFile("/f", "target");
        assertThat(fs.stat("/d").type()).isEqualTo(FileType.DIRECTORY);
        assertThat(fs.readdir("/").stream().map(DirEntry::name)).containsExactly("d", "f");
    }

    @Test
    void rmdirOfALinkToADirectoryIsNotADirectory() throws IOException {
        assumeCapable(Capability.SYMLINKS, Capability.DIRECTORIES);
        fs.mkdir("/d");
        symlink("/ld", "d");
        assertThatThrownBy(() -> fs.rmdir("/ld")).isInstanceOf(NotDirectoryException.class);
        remountChecked();
        assertThat(fs.stat("/d").type()).isEqualTo(FileType.DIRECTORY);
        assertThat(fs.lstat("/ld").type()).isEqualTo(FileType.SYMLINK);
    }

    @Test
    void realPathResolvesEveryLink() throws IOException {
        assumeCapable(Capability.SYMLINKS, Capability.DIRECTORIES);
        fs.mkdir("/d");
        fs.mkdir("/d/e");
        file("/d/e/f", "x");
        symlink("/d/le", "e");
        symlink("/top", "d/le");
        assertThat(fs.realPath("/")).isEqualTo("/");
        assertThat(fs.realPath("/d/e/f")).isEqualTo("/d/e/f");
        assertThat(fs.realPath("/top")).isEqualTo("/d/e");
        assertThat(fs.realPath("/top/f")).isEqualTo("/d/e/f");
        assertThatThrownBy(() -> fs.realPath("/top/missing")).isInstanceOf(NoSuchFileException.class);
    }

    // ---- hard links ----

    @Test
    void hardLinksShareOneInodeItsDataAndItsCount() throws IOException {
        assumeCapable(Capability.HARD_LINKS, Capability.DIRECTORIES);
        file("/a", "alpha");
        fs.mkdir("/d");
        fs.createLink("/b", "/a");
        fs.createLink("/d/c", "/b");
        IomapFile viaB = open("/b");
        write(viaB, 5, bytes(" and more"));
        for (int pass = 0; pass < 2; pass++) {
            long a = ino("/a");
            for (String name : List.of("/a", "/b", "/d/c")) {
                assertThat(ino(name)).as(name).isEqualTo(a);
                assertThat(fs.stat(name).linkCount()).as("link count via %s", name).isEqualTo(3);
                assertFile(name, "alpha and more");
            }
            assertThat(fs.readdir("/d")).containsExactly(new DirEntry("c", a, FileType.REGULAR));
            remountChecked();
        }
    }

    @Test
    void unlinkingOneNameKeepsTheOthersAndTheData() throws IOException {
        assumeCapable(Capability.HARD_LINKS);
        file("/a", "shared");
        fs.createLink("/b", "/a");
        long a = ino("/a");
        fs.unlink("/a");
        assertThat(fs.stat("/b").linkCount()).isEqualTo(1);
        remountChecked();
        assertThat(ino("/b")).isEqualTo(a);
        assertThat(fs.stat("/b").linkCount()).isEqualTo(1);
        assertFile("/b", "shared");
        assertThatThrownBy(() -> fs.stat("/a")).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void theLastNameUnlinkedWhileOpenKeepsTheFileUntilClose() throws IOException {
        assumeCapable(Capability.HARD_LINKS);
        file("/keep", "holds inode space");
        fs.sync();
        long free = fs.statfs().freeBlocks();
        byte[] data = TestData.pattern(7, 0, 16 * blockSize());
        try (IomapFile file = fs.create("/a")) {
            write(file, 0, data);
            file.fsync();
            fs.createLink("/b", "/a");
            fs.unlink("/a");
            fs.unlink("/b");
            assertThat(fs.readdir("/").stream().map(DirEntry::name)).containsExactly("keep");
            fs.sync();
            assertContent(file, data);
            write(file, data.length, bytes("tail"));
            assertThat(read(file, data.length, 4)).isEqualTo(bytes("tail"));
        }
        fs.sync();
        assertThat(fs.statfs().freeBlocks()).as("free blocks once the last close dropped the inode")
                .isEqualTo(free);
        remountChecked();
        assertThat(fs.readdir("/").stream().map(DirEntry::name)).containsExactly("keep");
        assertThat(fs.statfs().freeBlocks()).isEqualTo(free);
    }

    @Test
    void aHardLinkToADirectoryIsNotPermitted() throws IOException {
        assumeCapable(Capability.HARD_LINKS, Capability.DIRECTORIES);
        fs.mkdir("/d");
        int links = fs.stat("/d").linkCount();
        assertThatThrownBy(() -> fs.createLink("/x", "/d")).isInstanceOf(OperationNotPermittedException.class);
        remountChecked();
        assertThatThrownBy(() -> fs.lstat("/x")).isInstanceOf(NoSuchFileException.class);
        assertThat(fs.stat("/d").linkCount()).isEqualTo(links);
    }

    @Test
    void aHardLinkOntoAnExistingNameOrFromAMissingFileIsRefused() throws IOException {
        assumeCapable(Capability.HARD_LINKS);
        file("/a", "alpha");
        file("/b", "bravo");
        assertThatThrownBy(() -> fs.createLink("/b", "/a")).isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> fs.createLink("/a", "/a")).isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> fs.createLink("/c", "/missing")).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.createLink("/missing/c", "/a")).isInstanceOf(NoSuchFileException.class);
        remountChecked();
        assertThat(fs.stat("/a").linkCount()).isEqualTo(1);
        assertThat(fs.stat("/b").linkCount()).isEqualTo(1);
        assertFile("/b", "bravo");
        assertThat(fs.readdir("/").stream().map(DirEntry::name)).containsExactly("a", "b");
    }

    @Test
    void renamingAHardLinkOverAnotherNameOfTheSameInodeDoesNothing() throws IOException {
        assumeCapable(Capability.HARD_LINKS, Capability.DIRECTORIES);
        file("/a", "same");
        fs.createLink("/b", "/a");
        fs.rename("/a", "/b");
        remountChecked();
        assertThat(fs.readdir("/").stream().map(DirEntry::name)).containsExactly("a", "b");
        assertThat(ino("/a")).isEqualTo(ino("/b"));
        assertThat(fs.stat("/a").linkCount()).isEqualTo(2);
        assertFile("/b", "same");
    }

    @Test
    void renamingOverOneNameOfALinkedFileDropsOnlyThatLink() throws IOException {
        assumeCapable(Capability.HARD_LINKS, Capability.DIRECTORIES);
        file("/c", "linked");
        fs.createLink("/c2", "/c");
        file("/a", "replacement");
        long c = ino("/c");
        fs.rename("/a", "/c");
        assertThat(fs.stat("/c2").linkCount()).isEqualTo(1);
        remountChecked();
        assertFile("/c", "replacement");
        assertFile("/c2", "linked");
        assertThat(ino("/c2")).isEqualTo(c);
        assertThat(fs.stat("/c2").linkCount()).isEqualTo(1);
        assertThat(fs.stat("/c").linkCount()).isEqualTo(1);
    }

    @Test
    void aHardLinkToASymlinkLinksTheSymlinkItself() throws IOException {
        assumeCapable(Capability.HARD_LINKS, Capability.SYMLINKS);
        file("/f", "target");
        symlink("/s", "f");
        fs.createLink("/h", "/s");
        remountChecked();
        assertThat(fs.lstat("/h").type()).isEqualTo(FileType.SYMLINK);
        assertThat(ino("/h")).isEqualTo(ino("/s"));
        assertThat(fs.lstat("/s").linkCount()).isEqualTo(2);
        assertThat(fs.stat("/f").linkCount()).isEqualTo(1);
        assertThat(fs.readSymbolicLink("/h")).isEqualTo("f");
        fs.unlink("/s");
        remountChecked();
        assertFile("/h", "target");
        assertThat(fs.lstat("/h").linkCount()).isEqualTo(1);
    }
}
