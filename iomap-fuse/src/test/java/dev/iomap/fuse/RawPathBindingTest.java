package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.cryptomator.jfuse.api.FuseBuilder;
import org.cryptomator.jfuse.api.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RawPathBinding}'s upcalls called as libfuse calls them, with C strings and structs in native
 * memory (no kernel, no mount), over snapfs on a RAM device: the bridge sees the bytes of each path
 * one-to-one, and readdir hands libfuse's {@code fuse_fill_dir_t} the bytes of each name. Names are
 * written as ISO-8859-1 strings, one char per byte.
 */
class RawPathBindingTest {
    /** Bigger than {@code struct fuse_file_info} and {@code struct statvfs}; the binding sizes its views. */
    private static final long STRUCT_ROOM = 512;

    RamBlockDevice device;
    IomapFileSystem fs;
    FuseBridge bridge;
    JfuseStructs structs;
    RawPathBinding binding;
    Arena arena;

    @BeforeEach
    @SuppressWarnings("MustBeClosedChecker") // the arena lives for one test and is closed after it
    void mount() throws IOException {
        device = new RamBlockDevice(512, 4L << 20);
        IomapFileSystems.format(SnapAdapter.NAME, device, FormatOptions.blockSize(4096));
        fs = IomapFileSystems.mount(SnapAdapter.NAME, device, MountOptions.defaults());
        bridge = new FuseBridge(fs, FuseBuilder.getSupported().errno(), 1000, 100, false);
        bridge.useExactNames();
        structs = JfuseStructs.find(FuseBuilder.getSupported().getClass().getPackageName()).orElseThrow();
        binding = new RawPathBinding(bridge, bridge, structs);
        arena = Arena.ofConfined();
    }

    @AfterEach
    void unmount() throws IOException {
        arena.close();
        bridge.releaseAll();
        fs.close();
        device.close();
    }

    /** @return the bytes of {@code name} (one char per byte), NUL-terminated, as libfuse passes a path */
    private MemorySegment c(String name) {
        return arena.allocateFrom(name, ISO_8859_1);
    }

    private MemorySegment struct() {
        return arena.allocate(STRUCT_ROOM);
    }

    private static String form(String name) {
        return FileNames.decode(name.getBytes(ISO_8859_1));
    }

    private void createWithContent(String path, String content) {
        MemorySegment fi = struct();
        assertThat(binding.create(c(path), 0644, fi)).as(path).isZero();
        var info = structs.fileInfo(fi);
        assertThat(bridge.write(path, ByteBuffer.wrap(content.getBytes(ISO_8859_1)), content.length(), 0, info))
                .isEqualTo(content.length());
        assertThat(bridge.release(path, info)).isZero();
    }

    private String content(String path) {
        MemorySegment fi = struct();
        assertThat(binding.open(c(path), fi)).as(path).isZero();
        var info = structs.fileInfo(fi);
        ByteBuffer buf = ByteBuffer.allocate(16);
        int n = bridge.read(path, buf, 16, 0, info);
        assertThat(bridge.release(path, info)).isZero();
        return new String(buf.array(), 0, n, ISO_8859_1);
    }

    @Test
    void namesThatAreNotUtf8AreDistinctInEveryOperation() throws IOException {
        createWithContent("/caf\u00e9.txt", "A");
        createWithContent("/caf\u00e8.txt", "B");
        createWithContent("/caf\u00ef\u00bf\u00bd.txt", "C");
        assertThat(fs.readdir("/")).extracting(DirEntry::name)
                .containsExactlyInAnyOrder(form("caf\u00e9.txt"), form("caf\u00e8.txt"), "caf\uFFFD.txt");
        assertThat(content("/caf\u00e9.txt")).isEqualTo("A");
        assertThat(content("/caf\u00e8.txt")).isEqualTo("B");
        assertThat(content("/caf\u00ef\u00bf\u00bd.txt")).isEqualTo("C");

        MemorySegment stat = struct();
        assertThat(binding.getattr(c("/caf\u00e9.txt"), stat, MemorySegment.NULL)).isZero();
        assertThat(structs.stat(stat).getMode()).isEqualTo(Stat.S_IFREG | 0644);
        assertThat(structs.stat(stat).getSize()).isEqualTo(1);
        assertThat(binding.getattr(c("/caf\u00e0.txt"), struct(), MemorySegment.NULL)).isEqualTo(-LinuxErrno.ENOENT);

        assertThat(binding.rename(c("/caf\u00e9.txt"), c("/th\u00e9.txt"), 0)).isZero();
        assertThat(binding.unlink(c("/caf\u00e8.txt"))).isZero();
        assertThat(binding.mkdir(c("/d\u00ff"), 0755)).isZero();
        assertThat(fs.readdir("/")).extracting(DirEntry::name)
                .containsExactlyInAnyOrder(form("th\u00e9.txt"), "caf\uFFFD.txt", form("d\u00ff"));
        assertThat(binding.truncate(c("/th\u00e9.txt"), 3, MemorySegment.NULL)).isZero();
        assertThat(fs.stat(form("/th\u00e9.txt")).size()).isEqualTo(3);
        assertThat(binding.utimens(c("/th\u00e9.txt"), MemorySegment.NULL, MemorySegment.NULL)).as("now").isZero();
        assertThat(binding.rmdir(c("/d\u00ff"))).isZero();
        MemorySegment statvfs = struct();
        assertThat(binding.statfs(c("/"), statvfs)).isZero();
        assertThat(structs.statvfs(statvfs).getNameMax()).isEqualTo(255);
        assertThat(binding.fallocate(c("/th\u00e9.txt"), 0, 0, 4096, MemorySegment.NULL)).isEqualTo(-LinuxErrno.EBADF);
    }

    @Test
    void lseekFindsDataAndHolesOfTheOpenFile() {
        MemorySegment fi = struct();
        assertThat(binding.create(c("/sparse"), 0644, fi)).isZero();
        var info = structs.fileInfo(fi);
        assertThat(bridge.write("/sparse", ByteBuffer.allocate(4096), 4096, 0, info)).isEqualTo(4096);
        assertThat(bridge.write("/sparse", ByteBuffer.allocate(4096), 4096, 64 << 10, info)).isEqualTo(4096);
        assertThat(binding.truncate(c("/sparse"), 128 << 10, fi)).isZero();
        int seekData = FuseBridge.SEEK_DATA;
        int seekHole = FuseBridge.SEEK_HOLE;

        assertThat(binding.lseek(c("/sparse"), 0, seekHole, fi)).isEqualTo(4096);
        assertThat(binding.lseek(c("/sparse"), 4096, seekData, fi)).isEqualTo(64 << 10);
        assertThat(binding.lseek(c("/sparse"), 64 << 10, seekHole, fi)).isEqualTo(68 << 10);
        assertThat(binding.lseek(c("/sparse"), 68 << 10, seekData, fi)).as("only a hole to EOF")
                .isEqualTo(-LinuxErrno.ENXIO);
        assertThat(binding.lseek(c("/sparse"), 128 << 10, seekHole, fi)).as("at EOF").isEqualTo(-LinuxErrno.ENXIO);
        assertThat(binding.lseek(c("/sparse"), -1, seekData, fi)).isEqualTo(-LinuxErrno.EINVAL);
        assertThat(binding.lseek(c("/sparse"), 77, FuseBridge.SEEK_SET, fi)).isEqualTo(77);
        assertThat(binding.lseek(c("/sparse"), 0, 2, fi)).as("SEEK_END is the kernel's").isEqualTo(-LinuxErrno.EINVAL);
        assertThat(binding.lseek(c("/sparse"), 0, seekData, MemorySegment.NULL)).isEqualTo(-LinuxErrno.EBADF);
        assertThat(bridge.release("/sparse", info)).isZero();
        assertThat(binding.lseek(c("/sparse"), 0, seekData, fi)).as("released").isEqualTo(-LinuxErrno.EBADF);
    }

    @Test
    void aNameIsAtMost255BytesCountedAsBytes() {
        assertThat(binding.mkdir(c("/" + "\u00e9".repeat(255)), 0755)).isZero();
        assertThat(binding.mkdir(c("/" + "\u00e9".repeat(256)), 0755)).isEqualTo(-LinuxErrno.ENAMETOOLONG);
        assertThat(binding.mkdir(c("/" + "\u00c3\u00a9".repeat(127) + "x"), 0755)).as("UTF-8 é, 255 bytes").isZero();
        assertThat(binding.mkdir(c("/" + "\u00c3\u00a9".repeat(128)), 0755)).isEqualTo(-LinuxErrno.ENAMETOOLONG);
    }

    /** A stand-in for libfuse's {@code fuse_fill_dir_t}: records what it is given. */
    static final class FillDir {
        final List<String> names = new ArrayList<>();
        final List<Integer> modes = new ArrayList<>();
        final List<MemorySegment> bufs = new ArrayList<>();
        private final JfuseStructs structs;

        FillDir(JfuseStructs structs) {
            this.structs = structs;
        }

        @SuppressWarnings("restricted") // reads the C string and struct the filler is given
        int fill(MemorySegment buf, MemorySegment name, MemorySegment stat, long offset, int flags) {
            names.add(name.reinterpret(Long.MAX_VALUE).getString(0, ISO_8859_1));
            modes.add(structs.stat(stat).getMode());
            bufs.add(buf);
            return 0;
        }

        @SuppressWarnings("restricted") // an upcall stub standing for libfuse's function
        MemorySegment pointer(Arena arena) throws ReflectiveOperationException {
            var handle = MethodHandles.lookup().findVirtual(FillDir.class, "fill", MethodType.methodType(int.class,
                    MemorySegment.class, MemorySegment.class, MemorySegment.class, long.class, int.class)).bindTo(this);
            return Linker.nativeLinker().upcallStub(handle,
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), arena);
        }
    }

    @Test
    void readdirHandsLibfuseTheBytesOfEachName() throws Exception {
        createWithContent("/caf\u00e9.txt", "A");
        createWithContent("/caf\u00e8.txt", "B");
        assertThat(binding.mkdir(c("/d\u00ff"), 0755)).isZero();
        var fillDir = new FillDir(structs);
        MemorySegment buf = arena.allocate(JAVA_BYTE);

        assertThat(binding.readdir(c("/"), buf, fillDir.pointer(arena), 0, MemorySegment.NULL, 0)).isZero();
        assertThat(fillDir.names).containsExactly(".", "..", "caf\u00e8.txt", "caf\u00e9.txt", "d\u00ff");
        assertThat(fillDir.modes.subList(2, 5)).containsExactly(Stat.S_IFREG | 0644, Stat.S_IFREG | 0644,
                Stat.S_IFDIR | 0755);
        assertThat(fillDir.bufs).as("libfuse's buf, passed back").allMatch(buf::equals);
    }

    @Test
    void readdirRefusesANameThatStandsForNoBytes() throws Exception {
        IomapFileSystem odd = mock(IomapFileSystem.class);
        when(odd.readdir(any())).thenReturn(List.of(new DirEntry("lone\uD800", 2, FileType.REGULAR)));
        var oddBridge = new FuseBridge(odd, FuseBuilder.getSupported().errno(), 0, 0, false);
        oddBridge.useExactNames();
        var fillDir = new FillDir(structs);
        var oddBinding = new RawPathBinding(oddBridge, oddBridge, structs);
        assertThat(oddBinding.readdir(c("/"), MemorySegment.NULL, fillDir.pointer(arena), 0, MemorySegment.NULL, 0))
                .isEqualTo(-LinuxErrno.EILSEQ);
        assertThat(fillDir.names).containsExactly(".", "..");
    }
}
