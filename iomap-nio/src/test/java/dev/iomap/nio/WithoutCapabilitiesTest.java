package dev.iomap.nio;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.iomap.api.Capability;
import dev.iomap.api.FileType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileOwnerAttributeView;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.EnumSet;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An adapter that declares none of SYMLINKS, HARD_LINKS, POSIX_ATTRIBUTES and XATTRS: what the JDK's
 * contract says of a missing feature (UnsupportedOperationException, or a null view), and never a call
 * the mounted file system would refuse.
 */
class WithoutCapabilitiesTest {
    @TempDir
    Path dir;
    MockedFileSystem mocked;
    Path file;

    @BeforeEach
    void setUp() throws IOException {
        mocked = new MockedFileSystem(dir, EnumSet.of(Capability.DIRECTORIES, Capability.TRUNCATE));
        file = mocked.path("/f");
        when(mocked.iomap.stat("/f")).thenReturn(MockedFileSystem.stat(5, FileType.REGULAR, 0644));
    }

    @Test
    void linksAreUnsupported() {
        assertThatThrownBy(() -> Files.createSymbolicLink(mocked.path("/l"), file))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("SYMLINKS");
        assertThatThrownBy(() -> Files.readSymbolicLink(file)).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> Files.createLink(mocked.path("/l"), file))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("HARD_LINKS");
    }

    @Test
    void nofollowStatsWithStatAndToRealPathNeverAsksForRealPath() throws IOException {
        assertThat(Files.isSymbolicLink(file)).isFalse();
        assertThat(Files.readAttributes(file, "fileKey", LinkOption.NOFOLLOW_LINKS)).containsEntry("fileKey", 5L);
        assertThat(mocked.path("/./f").toRealPath()).isEqualTo(file);
        verify(mocked.iomap, never()).lstat(anyString());
        verify(mocked.iomap, never()).realPath(anyString());
    }

    @Test
    void posixOwnerAndUserViewsAreAbsent() {
        assertThat(mocked.fs.supportedFileAttributeViews()).containsExactly("basic");
        assertThat(Files.getFileAttributeView(file, PosixFileAttributeView.class)).isNull();
        assertThat(Files.getFileAttributeView(file, FileOwnerAttributeView.class)).isNull();
        assertThat(Files.getFileAttributeView(file, UserDefinedFileAttributeView.class)).isNull();
        assertThatThrownBy(() -> Files.readAttributes(file, PosixFileAttributes.class))
                .isInstanceOf(UnsupportedOperationException.class);
        for (String view : new String[] {"posix:*", "unix:mode", "owner:owner", "user:*"}) {
            assertThatThrownBy(() -> Files.readAttributes(file, view)).as(view)
                    .isInstanceOf(UnsupportedOperationException.class);
        }
        assertThatThrownBy(() -> Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------")))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> Files.getOwner(file)).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> mocked.fs.getUserPrincipalLookupService())
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("POSIX_ATTRIBUTES");
        assertThatThrownBy(() -> Files.setAttribute(file, "user:x", new byte[1]))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("XATTRS");
    }

    @Test
    void timesAndInitialPermissionsCannotBeSet() throws IOException {
        assertThatThrownBy(() -> Files.setLastModifiedTime(file, FileTime.fromMillis(1)))
                .isInstanceOf(UnsupportedOperationException.class);
        Files.getFileAttributeView(file, java.nio.file.attribute.BasicFileAttributeView.class).setTimes(null, null,
                FileTime.fromMillis(1));
        assertThatThrownBy(() -> Files.createFile(mocked.path("/g"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("POSIX_ATTRIBUTES");
        verify(mocked.iomap, never()).create(anyString());
        verify(mocked.iomap, never()).setAttributes(anyString(), org.mockito.ArgumentMatchers.any());
    }
}
