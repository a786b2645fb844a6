package dev.iomap.core.vfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.api.SymlinkLoopException;
import dev.iomap.api.XattrMode;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The core's path walk through symbolic links ({@code CoreFileSystem.Walk}) on snapfs: how many links
 * one path may follow, which calls follow the last name, {@code ..} taken physically, absolute
 * targets from the root, and the errors of a walk that cannot go on.
 */
class CoreSymlinkWalkTest {
    private static final NewInodeAttributes LINK = NewInodeAttributes.defaults(FileType.SYMLINK);

    private IomapFileSystem fs;

    @BeforeEach
    void mount() throws IOException {
        RamBlockDevice device = new RamBlockDevice(1024, 8L << 20);
        SnapAdapter adapter = new SnapAdapter();
        adapter.format(device, FormatOptions.blockSize(1024));
        fs = CoreRuntime.mount(adapter, device, MountOptions.defaults());
    }

    @AfterEach
    void unmount() throws IOException {
        fs.close();
    }

    private void file(String path, String content) throws IOException {
        try (IomapFile file = fs.create(path)) {
            file.write(0, ByteBuffer.wrap(content.getBytes(StandardCharsets.UTF_8)));
        }
    }

    private String content(String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            ByteBuffer dst = ByteBuffer.allocate((int) file.size());
            while (dst.hasRemaining() && file.read(dst.position(), dst) > 0) {
                // until full
            }
            return new String(dst.array(), StandardCharsets.UTF_8);
        }
    }

    private void symlink(String link, String target) throws IOException {
        fs.createSymbolicLink(link, target, LINK);
    }

    @Test
    void onePathFollowsFortyLinksInAllItsNamesAndNotOneMore() throws IOException {
        fs.mkdir("/dir");
        file("/dir/f", "end");
        // /m0 -> ... -> m19 -> dir: 20 follows; /dir/n0 -> ... -> n19 -> /dir/f: 20 more.
        for (int i = 0; i < 20; i++) {
            symlink("/m" + i, i == 19 ? "dir" : "m" + (i + 1));
            symlink("/dir/n" + i, i == 19 ? "/dir/f" : "n" + (i + 1));
        }
        assertThat(content("/m0/n0")).isEqualTo("end");
        assertThat(fs.realPath("/m0/n0")).isEqualTo("/dir/f");
        symlink("/extra", "m0");
        assertThatThrownBy(() -> fs.stat("/extra/n0")).isInstanceOf(SymlinkLoopException.class);
        // Without following the last name, the 41st link is not followed.
        assertThat(fs.lstat("/extra/n19").type()).isEqualTo(FileType.SYMLINK);
        assertThat(fs.stat("/extra/n19").type()).isEqualTo(FileType.REGULAR);
        assertThatThrownBy(() -> fs.lstat("/extra/n0/x")).isInstanceOf(SymlinkLoopException.class);
    }

    @Test
    void onlyOpenStatReaddirAndRealPathFollowTheLastName() throws IOException {
        fs.mkdir("/d");
        file("/d/f", "data");
        symlink("/ld", "d");
        symlink("/lf", "d/f");
        symlink("/llf", "lf");
        assertThat(fs.readdir("/ld")).containsExactly(new DirEntry("f", fs.stat("/d/f").ino(), FileType.REGULAR));
        assertThat(content("/llf")).isEqualTo("data");
        assertThat(fs.stat("/llf").ino()).isEqualTo(fs.stat("/d/f").ino());
        assertThat(fs.lstat("/llf").type()).isEqualTo(FileType.SYMLINK);
        assertThat(fs.readSymbolicLink("/llf")).isEqualTo("lf");
        assertThat(fs.realPath("/llf")).isEqualTo("/d/f");
        // setAttributes, xattrs and link act on the link itself.
        fs.setAttributes("/lf", AttributeChange.none().withUid(99));
        assertThat(fs.lstat("/lf").uid()).isEqualTo(99);
        assertThat(fs.stat("/lf").uid()).isNotEqualTo(99);
        fs.setXattr("/lf", "trusted.on-link", new byte[] {1}, XattrMode.ANY);
        assertThat(fs.listXattrs("/lf")).containsExactly("trusted.on-link");
        assertThat(fs.listXattrs("/d/f")).isEmpty();
        assertThatThrownBy(() -> fs.setXattr("/lf", "user.x", new byte[1], XattrMode.ANY))
                .isInstanceOf(OperationNotPermittedException.class);
        assertThatThrownBy(() -> fs.setAttributes("/lf", AttributeChange.none().withMode(0600)))
                .isInstanceOf(NotSupportedException.class);
        fs.createLink("/hard", "/lf");
        assertThat(fs.lstat("/hard").ino()).isEqualTo(fs.lstat("/lf").ino());
        // link(2) does not follow: a hard link to a link to a directory links the link.
        fs.createLink("/hd", "/ld");
        assertThat(fs.lstat("/hd").ino()).isEqualTo(fs.lstat("/ld").ino());
        assertThat(fs.lstat("/ld").linkCount()).isEqualTo(2);
        fs.unlink("/lf");
        assertThat(content("/d/f")).isEqualTo("data");
        assertThatThrownBy(() -> fs.readSymbolicLink("/d/f")).isInstanceOf(NotLinkException.class);
    }

    @Test
    void dotDotIsThePhysicalParentAndStopsAtTheRoot() throws IOException {
        fs.mkdir("/a");
        fs.mkdir("/a/b");
        file("/a/y", "physical");
        file("/y", "lexical");
        symlink("/l1", "a/b");
        symlink("/a/b/l2", "../y");
        symlink("/a/b/top", "../../../../../y");
        symlink("/a/b/abs", "/y");
        assertThat(content("/l1/l2")).isEqualTo("physical");
        assertThat(fs.realPath("/l1/l2")).isEqualTo("/a/y");
        assertThat(content("/l1/top")).isEqualTo("lexical");
        assertThat(content("/l1/abs")).isEqualTo("lexical");
        assertThat(fs.realPath("/l1/abs")).isEqualTo("/y");
        assertThat(fs.realPath("/l1")).isEqualTo("/a/b");
    }

    @Test
    void aWalkThroughAFileOrAMissingNameFails() throws IOException {
        file("/f", "x");
        symlink("/lf", "f/inside");
        symlink("/missing", "nothing/here");
        symlink("/dotfile", "f/.");
        symlink("/slash", "f/");
        assertThatThrownBy(() -> fs.stat("/lf")).isInstanceOf(NotDirectoryException.class);
        assertThatThrownBy(() -> fs.stat("/dotfile")).isInstanceOf(NotDirectoryException.class);
        assertThatThrownBy(() -> fs.open("/slash")).isInstanceOf(NotDirectoryException.class);
        assertThat(fs.lstat("/slash").type()).isEqualTo(FileType.SYMLINK);
        assertThatThrownBy(() -> fs.stat("/missing")).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.create("/missing/x")).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.mkdir("/lf/x")).isInstanceOf(NotDirectoryException.class);
        assertThatThrownBy(() -> fs.open("/f/x")).isInstanceOf(NotDirectoryException.class);
        symlink("/ld", ".");
        assertThatThrownBy(() -> fs.open("/ld")).isInstanceOf(java.nio.file.FileSystemException.class)
                .hasMessageContaining("Is a directory");
        assertThat(fs.realPath("/ld")).isEqualTo("/");
        fs.mkdir("/d");
        symlink("/dslash", "d/");
        assertThat(fs.stat("/dslash").type()).isEqualTo(FileType.DIRECTORY);
    }

    @Test
    void namespaceChangesThroughLinkedDirectoriesLandInTheTarget() throws IOException {
        fs.mkdir("/real");
        symlink("/via", "real");
        file("/via/f", "made");
        fs.mkdir("/via/sub");
        symlink("/via/sub/l", "../f");
        fs.rename("/via/f", "/via/g");
        assertThat(fs.readdir("/real").stream().map(DirEntry::name)).containsExactly("g", "sub");
        assertThatThrownBy(() -> content("/real/sub/l")).isInstanceOf(NoSuchFileException.class);
        fs.rename("/via/g", "/real/f");
        assertThat(content("/via/sub/l")).isEqualTo("made");
        fs.unlink("/via/sub/l");
        fs.rmdir("/via/sub");
        assertThat(fs.readdir("/via").stream().map(DirEntry::name)).containsExactly("f");
    }
}
