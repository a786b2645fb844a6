package dev.iomap.nio;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import dev.iomap.api.NewInodeAttributes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.time.Instant;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Links, POSIX attributes and extended attributes through {@code Files}, on a real image: one suite,
 * a tiny concrete class per adapter. Each test needs a capability; where the adapter does not declare
 * it the test is skipped, saying which (the provider's side of it is covered by the Mocked* tests).
 */
abstract class IomapLinksContract {
    private static final Instant NANOS = Instant.parse("2024-05-06T07:08:09.123456789Z");

    /** @return the adapter the images are formatted with */
    abstract String adapter();

    @TempDir
    Path dir;
    Path image;
    FileSystem fs;

    @BeforeEach
    void mount() throws IOException {
        image = dir.resolve("disk.img");
        fs = FileSystems.newFileSystem(IomapFilesContract.uri(adapter(), image), Map.of("create", "true", "size", "16m"));
    }

    @AfterEach
    void unmount() throws IOException {
        fs.close();
    }

    private void remount() throws IOException {
        fs.close();
        fs = FileSystems.newFileSystem(IomapFilesContract.uri(adapter(), image), Map.of());
    }

    private void assumeCapability(Capability capability) {
        assumeTrue(((IomapNioFileSystem) fs).supports(capability),
                adapter() + " does not declare " + capability + " (yet: see branches xfs-links and kit-links)");
    }

    @Test
    void symbolicLinksResolveReadBackAndAreSeenWithNofollow() throws IOException {
        assumeCapability(Capability.SYMLINKS);
        Files.createDirectories(fs.getPath("/d/sub"));
        Files.writeString(fs.getPath("/d/sub/file"), "through the link");
        Path link = fs.getPath("/d/link");
        Files.createSymbolicLink(link, fs.getPath("sub/file"));

        assertThat(Files.readSymbolicLink(link)).isEqualTo(fs.getPath("sub/file"));
        assertThat(Files.readString(link)).isEqualTo("through the link");
        assertThat(Files.isSymbolicLink(link)).isTrue();
        assertThat(Files.isRegularFile(link)).isTrue();
        assertThat(Files.isRegularFile(link, LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.readAttributes(link, "size", LinkOption.NOFOLLOW_LINKS)).containsEntry("size", 8L);
        assertThat(link.toRealPath()).isEqualTo(fs.getPath("/d/sub/file"));
        assertThat(fs.getPath("/d/./link").toRealPath(LinkOption.NOFOLLOW_LINKS)).isEqualTo(link);
        assertThat(Files.isSameFile(link, fs.getPath("/d/sub/file"))).isTrue();
        assertThatThrownBy(() -> Files.newByteChannel(link, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))
                .isInstanceOf(FileSystemException.class).hasMessageContaining("Too many levels of symbolic links");
        assertThatThrownBy(() -> Files.readSymbolicLink(fs.getPath("/d/sub/file"))).isInstanceOf(NotLinkException.class);
        assertThatThrownBy(() -> Files.createSymbolicLink(link, fs.getPath("x")))
                .isInstanceOf(FileAlreadyExistsException.class);
        try (Stream<Path> walk = Files.walk(fs.getPath("/d"))) {
            assertThat(walk.map(Path::toString)).containsExactly("/d", "/d/link", "/d/sub", "/d/sub/file");
        }

        Files.createSymbolicLink(fs.getPath("/dangling"), fs.getPath("/nowhere"));
        assertThat(Files.exists(fs.getPath("/dangling"))).isFalse();
        assertThat(Files.exists(fs.getPath("/dangling"), LinkOption.NOFOLLOW_LINKS)).isTrue();

        Files.delete(link);
        assertThat(Files.exists(link, LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.readString(fs.getPath("/d/sub/file"))).isEqualTo("through the link");
    }

    @Test
    void walkingWithFollowLinksFindsALoopByTheFileKey() throws IOException {
        assumeCapability(Capability.SYMLINKS);
        Files.createDirectories(fs.getPath("/top/dir"));
        Files.createSymbolicLink(fs.getPath("/top/dir/up"), fs.getPath(".."));
        try (Stream<Path> walk = Files.walk(fs.getPath("/top"))) {
            assertThat(walk.map(Path::toString)).containsExactly("/top", "/top/dir", "/top/dir/up");
        }
        try (Stream<Path> walk = Files.walk(fs.getPath("/top"), java.nio.file.FileVisitOption.FOLLOW_LINKS)) {
            assertThatThrownBy(() -> walk.forEach(path -> { }))
                    .hasCauseInstanceOf(java.nio.file.FileSystemLoopException.class);
        }
    }

    @Test
    void writingThroughADanglingLinkCreatesItsTarget() throws IOException {
        assumeCapability(Capability.SYMLINKS);
        Files.createDirectories(fs.getPath("/real/sub"));
        Files.createSymbolicLink(fs.getPath("/alias"), fs.getPath("real"));
        Files.createDirectory(fs.getPath("/d"));
        Path link = fs.getPath("/d/link");
        Files.createSymbolicLink(link, fs.getPath("../alias/sub/../new"));
        Files.createSymbolicLink(fs.getPath("/chain"), fs.getPath("/d/link"));

        Files.writeString(fs.getPath("/chain"), "created");

        assertThat(Files.readString(fs.getPath("/real/new"))).isEqualTo("created");
        assertThat(Files.readSymbolicLink(link)).isEqualTo(fs.getPath("../alias/sub/../new"));
        Files.createSymbolicLink(fs.getPath("/other"), fs.getPath("missing"));
        assertThatThrownBy(() -> Files.writeString(fs.getPath("/other"), "x", StandardOpenOption.CREATE_NEW))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThat(Files.exists(fs.getPath("/missing"))).isFalse();
    }

    @Test
    void hardLinksNameTheSameFile() throws IOException {
        assumeCapability(Capability.HARD_LINKS);
        Path first = fs.getPath("/first");
        Files.writeString(first, "shared");
        Path second = fs.getPath("/second");
        Files.createLink(second, first);
        Files.writeString(second, "changed", StandardOpenOption.APPEND);

        assertThat(Files.readString(first)).isEqualTo("sharedchanged");
        assertThat(Files.isSameFile(first, second)).isTrue();
        assertThat(Files.readAttributes(first, "fileKey")).isEqualTo(Files.readAttributes(second, "fileKey"));
        if (((IomapNioFileSystem) fs).supports(Capability.POSIX_ATTRIBUTES)) {
            assertThat(Files.readAttributes(first, "unix:nlink")).containsEntry("nlink", 2);
        }
        Files.delete(first);
        assertThat(Files.readString(second)).isEqualTo("sharedchanged");
        assertThatThrownBy(() -> Files.createLink(fs.getPath("/dirlink"), fs.getPath("/")))
                .isInstanceOf(FileSystemException.class);
    }

    @Test
    void modeOwnerAndNanosecondTimesAreKeptAcrossARemount() throws IOException {
        assumeCapability(Capability.POSIX_ATTRIBUTES);
        Path file = Files.createFile(fs.getPath("/f"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx-w----")));
        Path dir = Files.createDirectory(fs.getPath("/d"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        int uid = NewInodeAttributes.defaults(dev.iomap.api.FileType.REGULAR).uid();
        assertThat(Files.readAttributes(file, "unix:mode,uid")).containsEntry("mode", 0100720).containsEntry("uid", uid);
        assertThat(Files.readAttributes(dir, "unix:mode")).containsEntry("mode", 040700);
        FileTime born = Files.readAttributes(file, PosixFileAttributes.class).creationTime();

        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--r--r--"));
        Files.setOwner(file, fs.getUserPrincipalLookupService().lookupPrincipalByName("4321"));
        Files.setAttribute(file, "unix:gid", 8765);
        Files.getFileAttributeView(file, BasicFileAttributeView.class).setTimes(FileTime.from(NANOS),
                FileTime.from(NANOS.plusNanos(1)), FileTime.fromMillis(0));
        remount();

        PosixFileAttributes read = Files.readAttributes(fs.getPath("/f"), PosixFileAttributes.class);
        assertThat(PosixFilePermissions.toString(read.permissions())).isEqualTo("r--r--r--");
        assertThat(read.owner().getName()).isEqualTo("4321");
        assertThat(Files.readAttributes(fs.getPath("/f"), "unix:uid,gid")).containsEntry("uid", 4321)
                .containsEntry("gid", 8765);
        assertThat(read.lastModifiedTime().toInstant()).isEqualTo(NANOS);
        assertThat(read.lastAccessTime().toInstant()).isEqualTo(NANOS.plusNanos(1));
        assertThat(read.creationTime()).as("birth time never changes").isEqualTo(born);
        assertThat(fs.supportedFileAttributeViews()).contains("basic", "posix", "unix", "owner");
    }

    @Test
    void userAttributesAreWrittenListedReadAndDeleted() throws IOException {
        assumeCapability(Capability.XATTRS);
        Path file = fs.getPath("/f");
        Files.writeString(file, "x");
        UserDefinedFileAttributeView view = Files.getFileAttributeView(file, UserDefinedFileAttributeView.class);
        view.write("mime", ByteBuffer.wrap("text/plain".getBytes(UTF_8)));
        view.write("empty", ByteBuffer.allocate(0));
        view.write("mime", ByteBuffer.wrap("text/html".getBytes(UTF_8)));
        remount();

        view = Files.getFileAttributeView(fs.getPath("/f"), UserDefinedFileAttributeView.class);
        assertThat(view.list()).containsExactly("empty", "mime");
        assertThat(view.size("mime")).isEqualTo(9);
        ByteBuffer buffer = ByteBuffer.allocate(9);
        assertThat(view.read("mime", buffer)).isEqualTo(9);
        assertThat(new String(buffer.array(), UTF_8)).isEqualTo("text/html");
        assertThat((byte[]) Files.getAttribute(fs.getPath("/f"), "user:empty")).isEmpty();
        view.delete("empty");
        assertThat(view.list()).containsExactly("mime");
        UserDefinedFileAttributeView finalView = view;
        assertThatThrownBy(() -> finalView.delete("empty")).isInstanceOf(FileSystemException.class);
    }

    @Test
    void moveRefusesAnExistingTargetAndCopyKeepsAttributes() throws IOException {
        assumeCapability(Capability.POSIX_ATTRIBUTES);
        Path a = fs.getPath("/a");
        Files.writeString(a, "A");
        Files.writeString(fs.getPath("/b"), "B");
        assertThatThrownBy(() -> Files.move(a, fs.getPath("/b"))).isInstanceOf(FileAlreadyExistsException.class);
        assertThat(Files.readString(fs.getPath("/b"))).isEqualTo("B");

        Files.setPosixFilePermissions(a, PosixFilePermissions.fromString("rw-r-----"));
        Files.setLastModifiedTime(a, FileTime.from(NANOS));
        boolean xattrs = ((IomapNioFileSystem) fs).supports(Capability.XATTRS);
        if (xattrs) {
            Files.setAttribute(a, "user:tag", new byte[] {4, 2});
        }
        Files.copy(a, fs.getPath("/c"), StandardCopyOption.COPY_ATTRIBUTES);
        assertThat(Files.readString(fs.getPath("/c"))).isEqualTo("A");
        assertThat(Files.readAttributes(fs.getPath("/c"), "unix:mode,lastModifiedTime"))
                .containsEntry("mode", 0100640).containsEntry("lastModifiedTime", FileTime.from(NANOS));
        if (xattrs) {
            assertThat((byte[]) Files.getAttribute(fs.getPath("/c"), "user:tag")).containsExactly(4, 2);
        }
        Files.copy(a, fs.getPath("/plain"));
        assertThat(Files.readAttributes(fs.getPath("/plain"), "unix:mode")).containsEntry("mode", 0100644);
    }

    @Test
    void copyWithNofollowCopiesTheLinkItself() throws IOException {
        assumeCapability(Capability.SYMLINKS);
        Files.writeString(fs.getPath("/target"), "T");
        Files.createSymbolicLink(fs.getPath("/link"), fs.getPath("target"));
        Files.copy(fs.getPath("/link"), fs.getPath("/copy"), LinkOption.NOFOLLOW_LINKS);
        Files.copy(fs.getPath("/link"), fs.getPath("/data"));
        assertThat(Files.readSymbolicLink(fs.getPath("/copy"))).isEqualTo(fs.getPath("target"));
        assertThat(Files.isSymbolicLink(fs.getPath("/data"))).isFalse();
        assertThat(Files.readString(fs.getPath("/data"))).isEqualTo("T");
        Files.move(fs.getPath("/copy"), fs.getPath("/moved"));
        assertThat(Files.readSymbolicLink(fs.getPath("/moved"))).isEqualTo(fs.getPath("target"));
    }
}
