package dev.iomap.nio;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.RenameFlag;
import dev.iomap.api.XattrMode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Files.move's rename flags and Files.copy's attributes and links, as calls on the mounted file system. */
class MockedCopyMoveTest {
    @TempDir
    Path dir;
    MockedFileSystem mocked;

    @BeforeEach
    void setUp() throws IOException {
        mocked = new MockedFileSystem(dir, EnumSet.allOf(Capability.class));
        when(mocked.iomap.lstat("/a")).thenReturn(MockedFileSystem.stat(1, FileType.REGULAR, 0600));
        when(mocked.iomap.stat("/a")).thenReturn(MockedFileSystem.stat(1, FileType.REGULAR, 0600));
        when(mocked.iomap.realPath("/a")).thenReturn("/a");
        when(mocked.iomap.lstat("/b")).thenThrow(new NoSuchFileException("/b"));
    }

    @Test
    void moveWithoutReplaceIsAnAtomicNoReplaceRename() throws IOException {
        Files.move(mocked.path("/a"), mocked.path("/b"));
        verify(mocked.iomap).rename("/a", "/b", Set.of(RenameFlag.NOREPLACE));
        verify(mocked.iomap, never()).rename(anyString(), anyString());
    }

    @Test
    void atomicMoveAndReplacingMoveArePlainRenames() throws IOException {
        Files.move(mocked.path("/a"), mocked.path("/b"), StandardCopyOption.ATOMIC_MOVE);
        Files.move(mocked.path("/a"), mocked.path("/b"), StandardCopyOption.REPLACE_EXISTING);
        verify(mocked.iomap, org.mockito.Mockito.times(2)).rename("/a", "/b");
        verify(mocked.iomap, never()).rename(anyString(), anyString(), any());
    }

    @Test
    void moveMovesALinkNotItsTarget() throws IOException {
        when(mocked.iomap.lstat("/link")).thenReturn(MockedFileSystem.stat(3, FileType.SYMLINK, 0777));
        when(mocked.iomap.lstat("/dir")).thenReturn(MockedFileSystem.stat(4, FileType.DIRECTORY, 0755));
        Files.move(mocked.path("/link"), mocked.path("/dir"), StandardCopyOption.REPLACE_EXISTING);
        verify(mocked.iomap).rmdir("/dir");
        verify(mocked.iomap).rename("/link", "/dir");
        verify(mocked.iomap, never()).stat("/link");
    }

    @Test
    void copyAttributesCopiesModeOwnerTimesAndUserXattrsAfterTheData() throws IOException {
        IomapFile in = mock(IomapFile.class);
        IomapFile out = mock(IomapFile.class);
        when(in.read(org.mockito.ArgumentMatchers.eq(0L), any())).thenReturn(-1);
        when(mocked.iomap.open("/a")).thenReturn(in);
        when(mocked.iomap.create("/b")).thenReturn(out);
        when(mocked.iomap.listXattrs("/a")).thenReturn(List.of("security.x", "user.one"));
        when(mocked.iomap.getXattr("/a", "user.one")).thenReturn(new byte[] {1});

        Files.copy(mocked.path("/a"), mocked.path("/b"), StandardCopyOption.COPY_ATTRIBUTES);

        var order = org.mockito.Mockito.inOrder(mocked.iomap, out);
        order.verify(out).close();
        order.verify(mocked.iomap).setXattr("/b", "user.one", new byte[] {1}, XattrMode.ANY);
        order.verify(mocked.iomap).setAttributes("/b", AttributeChange.none().withAtime(MockedFileSystem.ATIME)
                .withMtime(MockedFileSystem.MTIME).withUid(1000).withGid(50).withMode(0600));
        verify(mocked.iomap, never()).setXattr(any(), org.mockito.ArgumentMatchers.eq("security.x"), any(), any());
    }

    @Test
    void copyWithoutAttributesSetsNone() throws IOException {
        IomapFile in = mock(IomapFile.class);
        when(in.read(org.mockito.ArgumentMatchers.eq(0L), any())).thenReturn(-1);
        when(mocked.iomap.open("/a")).thenReturn(in);
        when(mocked.iomap.create("/b")).thenReturn(mock(IomapFile.class));
        Files.copy(mocked.path("/a"), mocked.path("/b"));
        verify(mocked.iomap, never()).setAttributes(any(), any());
        verify(mocked.iomap, never()).listXattrs(any());
    }

    @Test
    void copyWithNofollowCopiesTheLinkWithItsOwnerAndTimes() throws IOException {
        when(mocked.iomap.lstat("/link")).thenReturn(MockedFileSystem.stat(3, FileType.SYMLINK, 0777));
        when(mocked.iomap.readSymbolicLink("/link")).thenReturn("target");
        Files.copy(mocked.path("/link"), mocked.path("/b"), LinkOption.NOFOLLOW_LINKS,
                StandardCopyOption.COPY_ATTRIBUTES);
        verify(mocked.iomap).createSymbolicLink("/b", "target", NewInodeAttributes.defaults(FileType.SYMLINK));
        verify(mocked.iomap).setAttributes("/b", AttributeChange.none().withAtime(MockedFileSystem.ATIME)
                .withMtime(MockedFileSystem.MTIME).withUid(1000).withGid(50));
        verify(mocked.iomap, never()).open(anyString());
        verify(mocked.iomap, never()).listXattrs(any());
    }

    @Test
    void copyFollowingALinkCopiesWhatItPointsAt() throws IOException {
        when(mocked.iomap.stat("/link")).thenReturn(MockedFileSystem.stat(1, FileType.REGULAR, 0600));
        when(mocked.iomap.realPath("/link")).thenReturn("/a");
        IomapFile in = mock(IomapFile.class);
        when(in.read(org.mockito.ArgumentMatchers.eq(0L), any())).thenReturn(-1);
        when(mocked.iomap.open("/a")).thenReturn(in);
        when(mocked.iomap.create("/b")).thenReturn(mock(IomapFile.class));
        Files.copy(mocked.path("/link"), mocked.path("/b"));
        verify(mocked.iomap).open("/a");
        verify(mocked.iomap, never()).createSymbolicLink(any(), any(), any());
    }
}
