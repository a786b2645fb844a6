package dev.iomap.nio;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FileNames;
import dev.iomap.api.IomapException;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.UnrepresentableNameException;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.ClosedFileSystemException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystemAlreadyExistsException;
import java.nio.file.FileSystemNotFoundException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a Java user relies on from {@code Files} and {@code FileChannel}, on an iomap image: one
 * suite, a tiny concrete class per adapter.
 */
abstract class IomapFilesContract {

    /** @return the adapter the images are formatted with */
    abstract String adapter();

    @TempDir
    Path dir;
    Path image;
    FileSystem fs;

    @BeforeEach
    void mount() throws IOException {
        image = dir.resolve("disk.img");
        fs = FileSystems.newFileSystem(uri(image), Map.of("create", "true", "size", "16m"));
    }

    @AfterEach
    void unmount() throws IOException {
        fs.close();
    }

    URI uri(Path image) {
        return uri(adapter(), image);
    }

    static URI uri(String adapter, Path image) {
        return URI.create("iomap:" + adapter + ":" + image.toAbsolutePath());
    }

    /** The JDK's {@code ExtendedOpenOption.DIRECT}, looked up by name (it lives in {@code jdk.unsupported}). */
    static java.nio.file.OpenOption extendedDirect() throws ClassNotFoundException {
        for (Object constant : Class.forName("com.sun.nio.file.ExtendedOpenOption").getEnumConstants()) {
            if (((Enum<?>) constant).name().equals("DIRECT")) {
                return (java.nio.file.OpenOption) constant;
            }
        }
        throw new IllegalStateException("no ExtendedOpenOption.DIRECT in this JDK");
    }

    @Test
    void extendedOpenOptionDirectOpensTheFileForDirectIo() throws Exception {
        Path file = fs.getPath("/direct");
        java.nio.file.OpenOption direct = extendedDirect();
        if (!((IomapNioFileSystem) fs).supports(dev.iomap.api.Capability.DIRECT_IO)) {
            assertThatThrownBy(() -> Files.newByteChannel(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    direct)).isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("DIRECT");
            return;
        }
        int block = (int) Files.getFileStore(file.getParent()).getBlockSize();
        byte[] data = new byte[4 * block];
        new java.util.Random(7).nextBytes(data);
        try (var channel = java.nio.channels.FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.READ, direct)) {
            assertThat(channel.write(java.nio.ByteBuffer.wrap(data), block)).isEqualTo(data.length);
            java.nio.ByteBuffer back = java.nio.ByteBuffer.allocate(data.length);
            assertThat(channel.read(back, block)).isEqualTo(data.length);
            assertThat(back.array()).isEqualTo(data);
            assertThatThrownBy(() -> channel.write(java.nio.ByteBuffer.allocate(block), 1))
                    .isInstanceOf(dev.iomap.api.InvalidRangeException.class);
        }
        byte[] all = Files.readAllBytes(file);
        assertThat(all).hasSize(5 * block);
        assertThat(java.util.Arrays.copyOfRange(all, block, 5 * block)).isEqualTo(data);
        assertThat(java.util.Arrays.copyOf(all, block)).containsOnly(0);
    }

    @Test
    void writesAndReadsBackFilesAndStrings() throws IOException {
        Path file = fs.getPath("/hello.txt");
        Files.writeString(file, "hello, iomap");
        assertThat(Files.readString(file)).isEqualTo("hello, iomap");
        assertThat(Files.size(file)).isEqualTo(12);
        assertThat(Files.exists(file)).isTrue();
        assertThat(Files.isRegularFile(file)).isTrue();
        assertThat(Files.isDirectory(fs.getPath("/"))).isTrue();
        assertThat(Files.exists(fs.getPath("/missing"))).isFalse();
    }

    @Test
    void createNewRefusesAnExistingFileAndCreateOpensIt() throws IOException {
        Path file = fs.getPath("/a");
        Files.createFile(file);
        assertThatThrownBy(() -> Files.createFile(file)).isInstanceOf(FileAlreadyExistsException.class);
        Files.write(file, new byte[] {1, 2, 3}, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        assertThat(Files.readAllBytes(file)).containsExactly(1, 2, 3);
        assertThatThrownBy(() -> Files.newByteChannel(fs.getPath("/nope"), StandardOpenOption.READ))
                .isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> Files.createFile(fs.getPath("/no/parent")))
                .isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void appendAddsAtTheEndAndTruncateExistingEmpties() throws IOException {
        Path file = fs.getPath("/log");
        Files.writeString(file, "one\n");
        Files.writeString(file, "two\n", StandardOpenOption.APPEND);
        try (SeekableByteChannel ch = Files.newByteChannel(file, StandardOpenOption.APPEND)) {
            ch.position(0);
            ch.write(ByteBuffer.wrap("three\n".getBytes(UTF_8)));
            assertThat(ch.position()).isEqualTo(14);
        }
        assertThat(Files.readString(file)).isEqualTo("one\ntwo\nthree\n");
        Files.writeString(file, "new");
        assertThat(Files.readString(file)).isEqualTo("new");
        assertThatThrownBy(() -> Files.newByteChannel(file, StandardOpenOption.READ, StandardOpenOption.APPEND))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void channelPositionSizeAndWritesBeyondEndOfFile() throws IOException {
        Path file = fs.getPath("/sparse");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap("abc".getBytes(UTF_8)));
            assertThat(ch.position()).isEqualTo(3);
            ch.position(10_000);
            assertThat(ch.read(ByteBuffer.allocate(4))).isEqualTo(-1);
            assertThat(ch.size()).isEqualTo(3);
            ch.write(ByteBuffer.wrap("xyz".getBytes(UTF_8)));
            assertThat(ch.size()).isEqualTo(10_003);
            assertThat(ch.position()).isEqualTo(10_003);

            ByteBuffer gap = ByteBuffer.allocate(9_997);
            assertThat(ch.read(gap, 3)).isEqualTo(9_997);
            assertThat(gap.array()).containsOnly(0);
            ByteBuffer all = ByteBuffer.allocate(3);
            ch.position(0).read(all);
            assertThat(new String(all.array(), UTF_8)).isEqualTo("abc");

            ch.write(ByteBuffer.wrap("Q".getBytes(UTF_8)), 1);
            assertThat(ch.position()).isEqualTo(3);
            ch.force(true);
        }
        byte[] bytes = Files.readAllBytes(file);
        assertThat(bytes).hasSize(10_003);
        assertThat(new String(bytes, 0, 3, UTF_8)).isEqualTo("aQc");
        assertThat(new String(bytes, 10_000, 3, UTF_8)).isEqualTo("xyz");
    }

    @Test
    void transfersDeleteOnCloseSyncAndClosedChannels() throws IOException {
        byte[] data = new byte[200_000];
        new java.util.Random(7).nextBytes(data);
        Path file = fs.getPath("/data");
        Files.write(file, data);
        Path host = dir.resolve("transferred");
        try (FileChannel in = FileChannel.open(file);
                FileChannel out = FileChannel.open(host, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            assertThat(in.transferTo(1000, 150_000, out)).isEqualTo(150_000);
        }
        assertThat(Files.readAllBytes(host)).isEqualTo(java.util.Arrays.copyOfRange(data, 1000, 151_000));
        try (FileChannel in = FileChannel.open(host);
                FileChannel out = FileChannel.open(fs.getPath("/back"), StandardOpenOption.CREATE_NEW,
                        StandardOpenOption.WRITE, StandardOpenOption.DSYNC)) {
            assertThat(out.transferFrom(in, 0, Long.MAX_VALUE)).isEqualTo(150_000);
        }
        assertThat(Files.mismatch(host, fs.getPath("/back"))).isEqualTo(-1);

        Path scratch = fs.getPath("/scratch");
        FileChannel temporary = FileChannel.open(scratch, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                StandardOpenOption.DELETE_ON_CLOSE);
        temporary.write(ByteBuffer.wrap(new byte[10]));
        assertThat(Files.exists(scratch)).isTrue();
        temporary.close();
        assertThat(Files.exists(scratch)).isFalse();
        assertThatThrownBy(() -> temporary.write(ByteBuffer.allocate(1)))
                .isInstanceOf(java.nio.channels.ClosedChannelException.class);

        FileChannel leftOpen = FileChannel.open(file);
        fs.close();
        assertThat(leftOpen.isOpen()).as("closing the file system closes its channels").isFalse();
    }

    @Test
    void truncateShrinksNeverGrowsAndClampsThePosition() throws IOException {
        Path file = fs.getPath("/t");
        Files.write(file, new byte[8192]);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.position(8000);
            ch.truncate(100);
            assertThat(ch.size()).isEqualTo(100);
            assertThat(ch.position()).isEqualTo(100);
            ch.truncate(5000);
            assertThat(ch.size()).isEqualTo(100);
            ch.force(false);
        }
        assertThat(Files.size(file)).isEqualTo(100);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            assertThatThrownBy(() -> ch.truncate(0)).isInstanceOf(NonWritableChannelException.class);
            assertThatThrownBy(() -> ch.write(ByteBuffer.allocate(1))).isInstanceOf(NonWritableChannelException.class);
            assertThatThrownBy(() -> ch.map(FileChannel.MapMode.READ_ONLY, 0, 1))
                    .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("memory-mapped");
            assertThatThrownBy(ch::lock).isInstanceOf(UnsupportedOperationException.class);
        }
    }

    @Test
    void directoriesCreateListAndDelete() throws IOException {
        Path d = fs.getPath("/d");
        Files.createDirectories(fs.getPath("/d/e/f"));
        Files.writeString(d.resolve("b.txt"), "b");
        Files.writeString(d.resolve("a.txt"), "a");
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(d)) {
            List<String> names = new ArrayList<>();
            stream.forEach(p -> names.add(p.toString()));
            assertThat(names).containsExactly("/d/a.txt", "/d/b.txt", "/d/e");
        }
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(d, "*.txt")) {
            assertThat(stream).extracting(p -> p.getFileName().toString()).containsExactly("a.txt", "b.txt");
        }
        try (Stream<Path> walk = Files.walk(fs.getPath("/"))) {
            assertThat(walk.map(Path::toString)).containsExactly("/", "/d", "/d/a.txt", "/d/b.txt", "/d/e",
                    "/d/e/f");
        }
        assertThatThrownBy(() -> Files.delete(d)).isInstanceOf(DirectoryNotEmptyException.class);
        assertThatThrownBy(() -> Files.createDirectory(d)).isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> Files.newDirectoryStream(d.resolve("a.txt")))
                .isInstanceOf(NotDirectoryException.class);
        Files.delete(fs.getPath("/d/e/f"));
        assertThat(Files.exists(fs.getPath("/d/e/f"))).isFalse();
        assertThatThrownBy(() -> Files.delete(fs.getPath("/d/e/f"))).isInstanceOf(NoSuchFileException.class);
        assertThat(Files.deleteIfExists(fs.getPath("/d/e/f"))).isFalse();
    }

    /** The name of bytes {@code caf\xe9.txt} (Latin-1, not UTF-8), in FileNames' form. */
    private static final String CAFE_E9 = FileNames.decode(new byte[] {'c', 'a', 'f', (byte) 0xe9, '.', 't', 'x', 't'});
    /** The name of bytes {@code caf\xe8.txt}. */
    private static final String CAFE_E8 = FileNames.decode(new byte[] {'c', 'a', 'f', (byte) 0xe8, '.', 't', 'x', 't'});

    private static String repeated(int length, int value) {
        byte[] bytes = new byte[length];
        java.util.Arrays.fill(bytes, (byte) value);
        return FileNames.decode(bytes);
    }

    @Test
    void adapterOptionsReachTheAdapterWhichRefusesUnknownOnes() throws IOException {
        fs.close();
        for (Object options : List.of("nosuch=1,other", Map.of("nosuch", 1))) {
            assertThatThrownBy(() -> FileSystems.newFileSystem(uri(image), Map.of("adapterOptions", options)))
                    .isInstanceOf(IomapException.class)
                    .hasMessageStartingWith(adapter() + ": unknown mount option 'nosuch' (");
        }
        assertThatThrownBy(() -> FileSystems.newFileSystem(uri(image), Map.of("adapterOptions", ",x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("option 'adapterOptions': mount option without a name in ',x'");
        fs = FileSystems.newFileSystem(uri(image), Map.of("adapterOptions", ""));
        assertThat(Files.isDirectory(fs.getPath("/"))).isTrue();
    }

    @Test
    void namesWithEscapedBytesRoundTripThroughCreateListOpenAndDelete() throws IOException {
        Path dir = Files.createDirectory(fs.getPath("/d\uDCFF"));
        Files.writeString(dir.resolve(CAFE_E9), "A");
        Files.writeString(dir.resolve(CAFE_E8), "B");
        Files.writeString(dir.resolve("caf\u00e9.txt"), "C");

        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            assertThat(stream).extracting(p -> p.getFileName().toString())
                    .containsExactly("caf\u00e9.txt", CAFE_E8, CAFE_E9);
        }
        fs.close();
        fs = FileSystems.newFileSystem(uri(image), Map.of());
        Path back = fs.getPath("/d\uDCFF");
        List<Path> listed;
        try (Stream<Path> list = Files.list(back)) {
            listed = list.toList();
        }
        assertThat(listed).extracting(Path::toString)
                .containsExactly("/d\uDCFF/caf\u00e9.txt", "/d\uDCFF/" + CAFE_E8, "/d\uDCFF/" + CAFE_E9);
        assertThat(listed).extracting(Files::readString).containsExactly("C", "B", "A");
        assertThat(listed.get(2)).isEqualTo(back.resolve(CAFE_E9));

        Files.delete(back.resolve(CAFE_E9));
        Files.move(back.resolve(CAFE_E8), back.resolve(CAFE_E9));
        assertThat(Files.readString(back.resolve(CAFE_E9))).isEqualTo("B");
        assertThat(Files.exists(back.resolve(CAFE_E8))).isFalse();
        assertThat(Files.readString(back.resolve("caf\u00e9.txt"))).isEqualTo("C");
    }

    @Test
    void aStringThatIsNoByteStringIsRefusedWhenThePathIsMade() throws IOException {
        // U+DCC3 U+DCA9 would spell the bytes C3 A9, which are "e-acute": a second spelling
        for (String bad : List.of("/caf\uDCC3\uDCA9", "/\uD800", "/ok/x\uDFFF")) {
            assertThatThrownBy(() -> fs.getPath(bad)).as(bad).isInstanceOf(UnrepresentableNameException.class)
                    .isInstanceOf(InvalidPathException.class).hasMessageContaining(bad);
        }
        Path root = fs.getPath("/");
        assertThatThrownBy(() -> root.resolve("\uD800")).isInstanceOf(UnrepresentableNameException.class);
        try (Stream<Path> list = Files.list(root)) {
            assertThat(list).isEmpty();
        }
    }

    @Test
    void aNameOver255BytesFailsItsOperationsWithFileSystemException() throws IOException {
        String longest = repeated(255, 0xff);
        String tooLong = repeated(256, 0xff);
        String e128 = "\u00e9".repeat(128); // 128 chars, 256 bytes
        Files.writeString(fs.getPath("/" + longest), "L");

        for (String name : List.of(tooLong, e128)) {
            Path path = fs.getPath("/" + name);
            assertThatThrownBy(() -> Files.writeString(path, "x")).as(name).isInstanceOf(FileSystemException.class)
                    .hasMessageContaining("File name too long");
            assertThatThrownBy(() -> Files.createDirectory(path)).isInstanceOf(FileSystemException.class)
                    .hasMessageContaining("File name too long");
            assertThatThrownBy(() -> Files.readAttributes(path, BasicFileAttributes.class))
                    .isInstanceOf(FileSystemException.class).hasMessageContaining("File name too long");
            assertThatThrownBy(() -> Files.delete(path)).isInstanceOf(FileSystemException.class)
                    .hasMessageContaining("File name too long");
            assertThat(Files.exists(path)).isFalse();
        }
        try (Stream<Path> list = Files.list(fs.getPath("/"))) {
            assertThat(list).extracting(p -> p.getFileName().toString()).containsExactly(longest);
        }
        assertThat(Files.readString(fs.getPath("/" + longest))).isEqualTo("L");
    }

    @Test
    void uriOfAByteNameIsAsciiAndComesBackAsTheSameName() throws IOException {
        Path path = fs.getPath("/d!/" + CAFE_E9);
        Files.createDirectory(path.getParent());
        Files.writeString(path, "A");

        URI uri = path.toUri();

        assertThat(uri.toASCIIString()).endsWith("!/d%21/caf%E9.txt");
        assertThat(Path.of(uri)).isEqualTo(path);
        assertThat(Path.of(URI.create(uri.toASCIIString()))).isEqualTo(path);
        assertThat(Files.readString(Path.of(URI.create(uri.toASCIIString())))).isEqualTo("A");
        assertThat(fs.getPath("/caf\u00e9").toUri().toASCIIString()).endsWith("!/caf%C3%A9");
    }

    @Test
    void moveRenamesAndReplacesOnlyWhenAsked() throws IOException {
        Path a = fs.getPath("/a");
        Path b = fs.getPath("/b");
        Files.writeString(a, "A");
        Files.writeString(b, "B");
        assertThatThrownBy(() -> Files.move(a, b)).isInstanceOf(FileAlreadyExistsException.class);
        Files.move(a, b, StandardCopyOption.REPLACE_EXISTING);
        assertThat(Files.exists(a)).isFalse();
        assertThat(Files.readString(b)).isEqualTo("A");

        Files.createDirectories(fs.getPath("/dir/sub"));
        Files.move(b, fs.getPath("/dir/sub/b"), StandardCopyOption.ATOMIC_MOVE);
        Files.move(fs.getPath("/dir"), fs.getPath("/renamed"));
        assertThat(Files.readString(fs.getPath("/renamed/sub/b"))).isEqualTo("A");
        assertThatThrownBy(() -> Files.move(fs.getPath("/renamed"), fs.getPath("/renamed/sub/x")))
                .hasMessageContaining("Invalid argument");

        Files.createDirectory(fs.getPath("/empty"));
        Files.writeString(fs.getPath("/file"), "F");
        Files.move(fs.getPath("/file"), fs.getPath("/empty"), StandardCopyOption.REPLACE_EXISTING);
        assertThat(Files.readString(fs.getPath("/empty"))).isEqualTo("F");
        Files.writeString(fs.getPath("/other"), "O");
        assertThatThrownBy(() -> Files.move(fs.getPath("/other"), fs.getPath("/renamed"),
                StandardCopyOption.REPLACE_EXISTING)).isInstanceOf(DirectoryNotEmptyException.class);
    }

    @Test
    void copyDuplicatesDataAndCrossesFileSystems() throws IOException {
        byte[] data = new byte[3 * 1024 * 1024 + 17];
        new java.util.Random(42).nextBytes(data);
        Path src = fs.getPath("/src.bin");
        Files.write(src, data);
        Files.copy(src, fs.getPath("/copy.bin"));
        assertThat(Files.readAllBytes(fs.getPath("/copy.bin"))).isEqualTo(data);
        assertThatThrownBy(() -> Files.copy(src, fs.getPath("/copy.bin")))
                .isInstanceOf(FileAlreadyExistsException.class);

        Path host = dir.resolve("host.bin");
        Files.copy(src, host);
        assertThat(Files.readAllBytes(host)).isEqualTo(data);
        Files.copy(host, fs.getPath("/back.bin"));
        assertThat(Files.mismatch(host, fs.getPath("/back.bin"))).isEqualTo(-1);

        try (FileSystem other = FileSystems.newFileSystem(uri(dir.resolve("other.img")),
                Map.of("create", true, "size", 8L << 20))) {
            Files.move(fs.getPath("/back.bin"), other.getPath("/moved.bin"));
            assertThat(Files.exists(fs.getPath("/back.bin"))).isFalse();
            assertThat(Files.readAllBytes(other.getPath("/moved.bin"))).isEqualTo(data);
        }
    }

    @Test
    void basicAttributesComeFromTheInode() throws IOException {
        Path file = fs.getPath("/f");
        Files.write(file, new byte[5000]);
        BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
        assertThat(attrs.size()).isEqualTo(5000);
        assertThat(attrs.isRegularFile()).isTrue();
        assertThat(attrs.isDirectory()).isFalse();
        assertThat(attrs.fileKey()).isInstanceOf(Long.class);
        assertThat(attrs.lastModifiedTime().toMillis()).isPositive();
        assertThat(Files.readAttributes(file, "size,isDirectory")).containsEntry("size", 5000L)
                .containsEntry("isDirectory", false);
        assertThat(Files.readAttributes(file, "basic:*")).containsOnlyKeys("lastModifiedTime", "lastAccessTime",
                "creationTime", "size", "isRegularFile", "isDirectory", "isSymbolicLink", "isOther", "fileKey");
        assertThat(Files.isSameFile(file, fs.getPath("/./f"))).isTrue();
        assertThat(Files.getFileStore(file).getTotalSpace()).isPositive();
        if (!((IomapNioFileSystem) fs).supports(dev.iomap.api.Capability.POSIX_ATTRIBUTES)) {
            assertThatThrownBy(() -> Files.readAttributes(file, "posix:permissions"))
                    .isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> Files.setLastModifiedTime(file, attrs.lastModifiedTime()))
                    .isInstanceOf(UnsupportedOperationException.class);
        }
    }

    @Test
    void contentsSurviveCloseAndRemountAndTheImageIsClean() throws IOException {
        Files.createDirectory(fs.getPath("/keep"));
        Files.writeString(fs.getPath("/keep/me"), "still here");
        fs.close();
        try (var device = FileBlockDevice.open(image, 4096, false)) {
            assertThat(IomapFileSystems.fsck(adapter(), device).problems()).isEmpty();
        }
        assertThatThrownBy(() -> Files.exists(fs.getPath("/keep"))).isInstanceOf(ClosedFileSystemException.class);
        assertThatThrownBy(() -> FileSystems.getFileSystem(uri(image))).isInstanceOf(FileSystemNotFoundException.class);
        fs = FileSystems.newFileSystem(uri(image), Map.of());
        assertThat(Files.readString(fs.getPath("/keep/me"))).isEqualTo("still here");
        assertThat(Path.of(fs.getPath("/keep/me").toUri())).isEqualTo(fs.getPath("/keep/me"));
    }

    @Test
    void oneFileSystemPerImageAndClearErrorsForBadUrisAndOptions() {
        assertThatThrownBy(() -> FileSystems.newFileSystem(uri(image), Map.of()))
                .isInstanceOf(FileSystemAlreadyExistsException.class);
        assertThat(FileSystems.getFileSystem(uri(image))).isSameAs(fs);
        assertThatThrownBy(() -> FileSystems.newFileSystem(URI.create("iomap:" + adapter() + ":relative.img"),
                Map.of())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not absolute");
        assertThatThrownBy(() -> FileSystems.newFileSystem(uri(dir.resolve("x.img")), Map.of("sise", "1m")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown iomap file system option 'sise'");
        assertThatThrownBy(() -> FileSystems.newFileSystem(uri(dir.resolve("missing.img")), Map.of()))
                .isInstanceOf(NoSuchFileException.class).hasMessageContaining("create");
    }
}
