package dev.iomap.nio;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.SymlinkLoopException;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Links and NOFOLLOW_LINKS through the provider: the exact calls on the mounted file system. */
class MockedLinksTest {
    @TempDir
    Path dir;
    MockedFileSystem mocked;

    @BeforeEach
    void setUp() throws IOException {
        mocked = new MockedFileSystem(dir, EnumSet.allOf(Capability.class));
        when(mocked.iomap.stat("/link")).thenReturn(MockedFileSystem.stat(7, FileType.REGULAR, 0640));
        when(mocked.iomap.lstat("/link")).thenReturn(MockedFileSystem.stat(9, FileType.SYMLINK, 0777));
        when(mocked.iomap.realPath("/link")).thenReturn("/real");
    }

    @Test
    void createsReadsAndHardLinksWithThePathsGiven() throws IOException {
        Path link = mocked.path("/d/link");
        Files.createSymbolicLink(link, mocked.path("../target/x"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        verify(mocked.iomap).createSymbolicLink("/d/link", "../target/x", NewInodeAttributes.defaults(FileType.SYMLINK));

        when(mocked.iomap.readSymbolicLink("/d/link")).thenReturn("../target/x");
        assertThat(Files.readSymbolicLink(link)).isEqualTo(mocked.path("../target/x"));

        Files.createLink(mocked.path("/second"), mocked.path("/d/./first"));
        verify(mocked.iomap).createLink("/second", "/d/first");
    }

    @Test
    void followingStatsTheTargetAndNofollowTheLink() throws IOException {
        Path link = mocked.path("/link");
        assertThat(Files.isSymbolicLink(link)).isTrue();
        assertThat(Files.isRegularFile(link)).isTrue();
        assertThat(Files.isRegularFile(link, LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.readAttributes(link, "fileKey,isSymbolicLink")).containsEntry("fileKey", 7L)
                .containsEntry("isSymbolicLink", false);
        assertThat(Files.readAttributes(link, "unix:ino,mode", LinkOption.NOFOLLOW_LINKS)).containsEntry("ino", 9L)
                .containsEntry("mode", 0120777);

        when(mocked.iomap.stat("/dangling")).thenThrow(new NoSuchFileException("/dangling"));
        when(mocked.iomap.lstat("/dangling")).thenReturn(MockedFileSystem.stat(11, FileType.SYMLINK, 0777));
        assertThat(Files.exists(mocked.path("/dangling"))).isFalse();
        assertThat(Files.exists(mocked.path("/dangling"), LinkOption.NOFOLLOW_LINKS)).isTrue();
    }

    @Test
    void settersActOnTheRealPathWhenFollowingAndOnTheLinkWithNofollow() throws IOException {
        Path link = mocked.path("/link");
        FileTime time = FileTime.from(MockedFileSystem.MTIME);
        Files.setLastModifiedTime(link, time);
        verify(mocked.iomap).setAttributes("/real", AttributeChange.none().withMtime(MockedFileSystem.MTIME));

        Files.setAttribute(link, "basic:lastAccessTime", time, LinkOption.NOFOLLOW_LINKS);
        verify(mocked.iomap).setAttributes("/link", AttributeChange.none().withAtime(MockedFileSystem.MTIME));

        Files.setPosixFilePermissions(link, PosixFilePermissions.fromString("rwxr-x---"));
        verify(mocked.iomap).setAttributes("/real", AttributeChange.none().withMode(0750));
    }

    @Test
    void toRealPathResolvesLinksOrWithNofollowOnlyChecksTheName() throws IOException {
        assertThat(mocked.path("/x/../link").toRealPath()).isEqualTo(mocked.path("/real"));
        assertThat(mocked.path("/x/../link").toRealPath(LinkOption.NOFOLLOW_LINKS)).isEqualTo(mocked.path("/link"));
        verify(mocked.iomap).lstat("/link");
        verify(mocked.iomap).realPath("/link");

        when(mocked.iomap.lstat("/gone")).thenThrow(new NoSuchFileException("/gone"));
        assertThatThrownBy(() -> mocked.path("/gone").toRealPath(LinkOption.NOFOLLOW_LINKS))
                .isInstanceOf(NoSuchFileException.class);
        verify(mocked.iomap, never()).realPath("/gone");
    }

    @Test
    void openingALinkWithNofollowIsEloopAndNeverOpensIt() throws IOException {
        assertThatThrownBy(() -> Files.newByteChannel(mocked.path("/link"), StandardOpenOption.READ,
                LinkOption.NOFOLLOW_LINKS)).isInstanceOf(SymlinkLoopException.class)
                .isInstanceOf(FileSystemException.class).hasMessageContaining("Too many levels of symbolic links");
        verify(mocked.iomap, never()).open(anyString());

        when(mocked.iomap.lstat("/plain")).thenReturn(MockedFileSystem.stat(3, FileType.REGULAR, 0644));
        IomapFile file = org.mockito.Mockito.mock(IomapFile.class);
        when(mocked.iomap.open("/plain", java.util.Set.of(dev.iomap.api.OpenFlag.READ_ONLY))).thenReturn(file);
        Files.newByteChannel(mocked.path("/plain"), StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS).close();
        verify(file).close();
    }

    @Test
    void createThroughADanglingLinkCreatesItsTargetPhysically() throws IOException {
        when(mocked.iomap.open("/d/l")).thenThrow(new NoSuchFileException("/d/l"));
        when(mocked.iomap.lstat("/d/l")).thenReturn(MockedFileSystem.stat(9, FileType.SYMLINK, 0777));
        when(mocked.iomap.realPath("/d")).thenReturn("/x/d");
        when(mocked.iomap.readSymbolicLink("/d/l")).thenReturn("../alias/./new");
        when(mocked.iomap.realPath("/x/alias")).thenReturn("/y");
        when(mocked.iomap.lstat("/y/new")).thenThrow(new NoSuchFileException("/y/new"));
        IomapFile file = org.mockito.Mockito.mock(IomapFile.class);
        when(mocked.iomap.create("/y/new")).thenReturn(file);

        Files.newByteChannel(mocked.path("/d/l"), StandardOpenOption.CREATE, StandardOpenOption.WRITE).close();

        verify(mocked.iomap).create("/y/new");
        verify(mocked.iomap, never()).create("/d/l");
    }

    @Test
    void aChainOfMoreThanFortyDanglingLinksIsEloop() throws IOException {
        when(mocked.iomap.open("/loop")).thenThrow(new NoSuchFileException("/loop"));
        when(mocked.iomap.lstat("/loop")).thenReturn(MockedFileSystem.stat(9, FileType.SYMLINK, 0777));
        when(mocked.iomap.realPath("/")).thenReturn("/");
        when(mocked.iomap.readSymbolicLink("/loop")).thenReturn("loop");
        assertThatThrownBy(() -> Files.newByteChannel(mocked.path("/loop"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE)).isInstanceOf(SymlinkLoopException.class);
        verify(mocked.iomap, never()).create(anyString());
    }

    @Test
    void deleteRemovesTheLinkItselfEvenWhenItPointsAtADirectory() throws IOException {
        when(mocked.iomap.stat("/link")).thenReturn(MockedFileSystem.stat(7, FileType.DIRECTORY, 0755));
        Files.delete(mocked.path("/link"));
        verify(mocked.iomap).unlink("/link");
        verify(mocked.iomap, never()).rmdir(any());
    }
}
