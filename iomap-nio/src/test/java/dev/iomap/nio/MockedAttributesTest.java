package dev.iomap.nio;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.XattrMode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.ProviderMismatchException;
import java.nio.file.attribute.FileOwnerAttributeView;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The posix, unix, owner and user views through the provider, over a mocked mounted file system. */
class MockedAttributesTest {
    @TempDir
    Path dir;
    MockedFileSystem mocked;
    Path file;

    @BeforeEach
    void setUp() throws IOException {
        mocked = new MockedFileSystem(dir, EnumSet.allOf(Capability.class));
        file = mocked.path("/f");
        when(mocked.iomap.stat("/f")).thenReturn(MockedFileSystem.stat(5, FileType.REGULAR, 04640));
        when(mocked.iomap.realPath("/f")).thenReturn("/f");
    }

    @Test
    void posixAttributesCarryTheStatExactly() throws IOException {
        PosixFileAttributes attributes = Files.readAttributes(file, PosixFileAttributes.class);
        assertThat(PosixFilePermissions.toString(attributes.permissions())).isEqualTo("rw-r-----");
        assertThat(attributes.owner().getName()).isEqualTo("alice");
        assertThat(attributes.group().getName()).isEqualTo("staff");
        assertThat(attributes.fileKey()).isEqualTo(5L);
        assertThat(attributes.size()).isEqualTo(42);
        assertThat(attributes.lastAccessTime()).isEqualTo(FileTime.from(MockedFileSystem.ATIME));
        assertThat(attributes.lastModifiedTime().toInstant()).isEqualTo(MockedFileSystem.MTIME);
        assertThat(attributes.creationTime().toInstant()).isEqualTo(MockedFileSystem.BTIME);

        assertThat(Files.readAttributes(file, "unix:*")).containsEntry("mode", 0104640).containsEntry("ino", 5L)
                .containsEntry("nlink", 2).containsEntry("uid", 1000).containsEntry("gid", 50)
                .containsEntry("dev", 0L).containsEntry("rdev", 0L)
                .containsEntry("ctime", FileTime.from(MockedFileSystem.CTIME))
                .containsEntry("permissions", PosixFilePermissions.fromString("rw-r-----"))
                .containsEntry("lastModifiedTime", FileTime.from(MockedFileSystem.MTIME)).hasSize(20);
        assertThat(Files.readAttributes(file, "posix:group,size")).containsOnlyKeys("group", "size");
        assertThat(Files.readAttributes(file, "owner:owner").get("owner").toString()).isEqualTo("alice");
        assertThatThrownBy(() -> Files.readAttributes(file, "posix:ino")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Files.readAttributes(file, "dos:*")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void ownerAndGroupAreSetByIdThroughTheLookupService() throws IOException {
        UserPrincipalLookupService names = mocked.fs.getUserPrincipalLookupService();
        UserPrincipal root = names.lookupPrincipalByName("root");
        GroupPrincipal staff = names.lookupPrincipalByGroupName("staff");
        Files.setOwner(file, root);
        verify(mocked.iomap).setAttributes("/f", AttributeChange.none().withUid(0));
        Files.getFileAttributeView(file, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).setGroup(staff);
        verify(mocked.iomap).setAttributes("/f", AttributeChange.none().withGid(50));
        Files.setAttribute(file, "unix:uid", 4321);
        verify(mocked.iomap).setAttributes("/f", AttributeChange.none().withUid(4321));
        Files.setAttribute(file, "unix:mode", 02755);
        verify(mocked.iomap).setAttributes("/f", AttributeChange.none().withMode(02755));

        assertThat(Files.getOwner(file)).isEqualTo(names.lookupPrincipalByName("1000"));
        assertThat(Files.getFileAttributeView(file, FileOwnerAttributeView.class).name()).isEqualTo("owner");
        assertThatThrownBy(() -> Files.setOwner(file, staff)).isInstanceOf(IOException.class)
                .hasMessageContaining("can't be a group");
        assertThatThrownBy(() -> Files.setOwner(file, () -> "stranger")).isInstanceOf(ProviderMismatchException.class);
    }

    @Test
    void theLookupServiceKnowsNamesAndNumbersAndRefusesTheRest() throws IOException {
        UserPrincipalLookupService names = mocked.fs.getUserPrincipalLookupService();
        assertThat(names.lookupPrincipalByName("alice")).isEqualTo(new IomapPrincipal(1000, "other"));
        assertThat(names.lookupPrincipalByName("1000").getName()).isEqualTo("alice");
        assertThat(names.lookupPrincipalByName("77").getName()).isEqualTo("77");
        assertThat(names.lookupPrincipalByGroupName("0").getName()).isEqualTo("root");
        assertThat(names.lookupPrincipalByGroupName("staff")).isNotEqualTo(names.lookupPrincipalByName("50"));
        assertThat(names.lookupPrincipalByName("4294967295").getName()).isEqualTo("4294967295");
        for (String unknown : List.of("nobody-here", "", "12a", "4294967296")) {
            assertThatThrownBy(() -> names.lookupPrincipalByName(unknown)).as(unknown)
                    .isInstanceOf(UserPrincipalNotFoundException.class);
        }
    }

    @Test
    void permissionsGivenAtCreationAreTheModeOwnedByThisProcess() throws IOException {
        var attribute = PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x---"));
        when(mocked.iomap.create(any(), any())).thenReturn(org.mockito.Mockito.mock(IomapFile.class));
        NewInodeAttributes defaults = NewInodeAttributes.defaults(FileType.REGULAR);
        Files.createFile(mocked.path("/new"), attribute);
        verify(mocked.iomap).create("/new", new NewInodeAttributes(0710, defaults.uid(), defaults.gid()));
        Files.createDirectory(mocked.path("/dir"), attribute);
        verify(mocked.iomap).mkdir("/dir", new NewInodeAttributes(0710, defaults.uid(), defaults.gid()));
        Files.createDirectory(mocked.path("/plain"));
        verify(mocked.iomap).mkdir("/plain");
        verify(mocked.iomap, never()).mkdir(org.mockito.ArgumentMatchers.eq("/plain"), any());
    }

    @Test
    void theUserViewIsTheUserNamespaceWithoutItsPrefix() throws IOException {
        when(mocked.iomap.listXattrs("/f")).thenReturn(List.of("security.selinux", "trusted.x", "user.a", "user.mime"));
        when(mocked.iomap.getXattr("/f", "user.mime")).thenReturn("text/plain".getBytes(StandardCharsets.UTF_8));
        when(mocked.iomap.getXattr("/f", "user.none")).thenThrow(new NoSuchAttributeException("/f", "user.none"));
        UserDefinedFileAttributeView view = Files.getFileAttributeView(file, UserDefinedFileAttributeView.class);

        assertThat(view.name()).isEqualTo("user");
        assertThat(view.list()).containsExactly("a", "mime");
        assertThat(view.size("mime")).isEqualTo(10);
        ByteBuffer buffer = ByteBuffer.allocate(12).put((byte) 1);
        assertThat(view.read("mime", buffer)).isEqualTo(10);
        assertThat(buffer.position()).isEqualTo(11);
        assertThat(new String(buffer.array(), 1, 10, StandardCharsets.UTF_8)).isEqualTo("text/plain");
        assertThatThrownBy(() -> view.read("mime", ByteBuffer.allocate(9))).isInstanceOf(FileSystemException.class)
                .hasMessageContaining("Insufficient space in buffer");
        assertThatThrownBy(() -> view.read("mime", ByteBuffer.allocate(20).asReadOnlyBuffer()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> view.size("none")).isInstanceOf(NoSuchAttributeException.class);

        ByteBuffer value = ByteBuffer.wrap(new byte[] {9, 8, 7, 6}).position(1);
        assertThat(view.write("new", value)).isEqualTo(3);
        assertThat(value.hasRemaining()).isFalse();
        verify(mocked.iomap).setXattr("/f", "user.new", new byte[] {8, 7, 6}, XattrMode.ANY);
        Files.setAttribute(file, "user:raw", new byte[] {5});
        verify(mocked.iomap).setXattr("/f", "user.raw", new byte[] {5}, XattrMode.ANY);
        view.delete("a");
        verify(mocked.iomap).removeXattr("/f", "user.a");

        when(mocked.iomap.getXattr("/f", "user.a")).thenReturn(new byte[] {1, 2});
        Map<String, Object> all = Files.readAttributes(file, "user:*");
        assertThat(all).containsOnlyKeys("a", "mime");
        assertThat((byte[]) all.get("a")).containsExactly(1, 2);
    }

    @Test
    void viewsAndNamesFollowTheCapabilities() throws IOException {
        assertThat(mocked.fs.supportedFileAttributeViews()).containsExactly("basic", "posix", "unix", "owner", "user");
        assertThat(mocked.fs.fileStore().supportsFileAttributeView(UserDefinedFileAttributeView.class)).isTrue();
        assertThat(mocked.fs.fileStore().supportsFileAttributeView("posix")).isTrue();
    }
}
