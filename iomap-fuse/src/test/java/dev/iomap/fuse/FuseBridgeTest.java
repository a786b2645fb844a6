package dev.iomap.fuse;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.RETURNS_DEEP_STUBS;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.FileNames;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.cryptomator.jfuse.api.DirFiller;
import org.cryptomator.jfuse.api.FileInfo;
import org.cryptomator.jfuse.api.FuseBuilder;
import org.cryptomator.jfuse.api.FuseOperations.Operation;
import org.cryptomator.jfuse.api.Stat;
import org.cryptomator.jfuse.api.Statvfs;
import org.cryptomator.jfuse.api.TimeSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The bridge's operations called directly (no kernel), over snapfs on a RAM device. */
class FuseBridgeTest {
    RamBlockDevice device;
    IomapFileSystem fs;
    FuseBridge bridge;

    @BeforeEach
    void mount() throws IOException {
        device = new RamBlockDevice(512, 4L << 20);
        IomapFileSystems.format(SnapAdapter.NAME, device, FormatOptions.blockSize(4096));
        fs = IomapFileSystems.mount(SnapAdapter.NAME, device, MountOptions.defaults());
        bridge = new FuseBridge(fs, FuseBuilder.getSupported().errno(), 1000, 100, true);
    }

    @AfterEach
    void unmount() throws IOException {
        bridge.releaseAll();
        fs.close();
        device.close();
    }

    /** A FileInfo as libfuse would pass it: flags in, handle out. */
    static final class Info implements FileInfo {
        long fh;
        final int flags;

        Info(int flags) {
            this.flags = flags;
        }

        @Override
        public long getFh() {
            return fh;
        }

        @Override
        public void setFh(long fh) {
            this.fh = fh;
        }

        @Override
        public int getFlags() {
            return flags;
        }

        @Override
        public java.util.Set<java.nio.file.StandardOpenOption> getOpenFlags() {
            return java.util.Set.of();
        }

        @Override
        public long getLockOwner() {
            return 0;
        }
    }

    private Info create(String path) {
        Info info = new Info(0);
        assertThat(bridge.create(path, 0644, info)).isZero();
        return info;
    }

    private int write(String path, Info info, long offset, String text) {
        ByteBuffer buf = ByteBuffer.wrap(text.getBytes(UTF_8));
        return bridge.write(path, buf, buf.remaining(), offset, info);
    }

    private String read(String path, Info info, long offset, int size) {
        ByteBuffer buf = ByteBuffer.allocate(size);
        int n = bridge.read(path, buf, size, offset, info);
        assertThat(n).isNotNegative();
        return new String(buf.array(), 0, n, UTF_8);
    }

    @Test
    void declaresOnlyWhatItImplements() {
        assertThat(bridge.supportedOperations()).doesNotContain(Operation.OPEN_DIR, Operation.RELEASE_DIR,
                Operation.ACCESS, Operation.CHMOD, Operation.CHOWN, Operation.SYMLINK, Operation.READLINK,
                Operation.GET_XATTR, Operation.SET_XATTR, Operation.LIST_XATTR, Operation.REMOVE_XATTR);
        assertThat(bridge.supportedOperations()).contains(Operation.GET_ATTR, Operation.READ_DIR, Operation.MKDIR,
                Operation.CREATE, Operation.OPEN, Operation.READ, Operation.WRITE, Operation.TRUNCATE,
                Operation.UNLINK, Operation.RMDIR, Operation.RENAME, Operation.STATFS, Operation.FSYNC,
                Operation.FLUSH, Operation.RELEASE);
    }

    @Test
    void createWriteReadFsyncRelease() {
        Info info = create("/f");
        assertThat(info.fh).isPositive();
        assertThat(write("/f", info, 0, "hello, fuse")).isEqualTo(11);
        assertThat(read("/f", info, 7, 100)).isEqualTo("fuse");
        assertThat(read("/f", info, 11, 100)).isEmpty();
        assertThat(bridge.fsync("/f", 1, info)).isZero();
        assertThat(bridge.fsync("/f", 0, info)).isZero();
        assertThat(bridge.flush("/f", info)).isZero();
        assertThat(bridge.openFiles()).isEqualTo(1);
        assertThat(bridge.release("/f", info)).isZero();
        assertThat(bridge.openFiles()).isZero();
        assertThat(bridge.read("/f", ByteBuffer.allocate(1), 1, 0, info)).isEqualTo(-LinuxErrno.EBADF);

        Info again = new Info(0);
        assertThat(bridge.open("/f", again)).isZero();
        assertThat(read("/f", again, 0, 5)).isEqualTo("hello");
        Info truncating = new Info(FuseBridge.O_TRUNC);
        assertThat(bridge.open("/f", truncating)).isZero();
        assertThat(read("/f", again, 0, 5)).isEmpty();
    }

    @Test
    void initLeavesKillingSetUserIdToTheKernelAndRunsTheMountsHook() {
        var conn = mock(org.cryptomator.jfuse.api.FuseConnInfo.class);
        when(conn.want()).thenReturn(org.cryptomator.jfuse.api.FuseConnInfo.FUSE_CAP_HANDLE_KILLPRIV
                | org.cryptomator.jfuse.api.FuseConnInfo.FUSE_CAP_ASYNC_READ);
        boolean[] hookRan = {false};
        bridge.onInit(() -> hookRan[0] = true);
        bridge.init(conn, mock(org.cryptomator.jfuse.api.FuseConfig.class));
        verify(conn).setWant(org.cryptomator.jfuse.api.FuseConnInfo.FUSE_CAP_ASYNC_READ);
        verify(conn).setMaxWrite(1 << 20);
        verify(conn).setMaxReadahead(1 << 20);
        assertThat(hookRan[0]).isTrue();
    }

    @Test
    void initAsksForTheWritebackCacheOnlyWhenToldAndTheKernelCan() {
        int wbc = org.cryptomator.jfuse.api.FuseConnInfo.FUSE_CAP_WRITEBACK_CACHE;
        int async = org.cryptomator.jfuse.api.FuseConnInfo.FUSE_CAP_ASYNC_READ;
        var notAsked = mock(org.cryptomator.jfuse.api.FuseConnInfo.class);
        when(notAsked.want()).thenReturn(async);
        when(notAsked.capable()).thenReturn(async | wbc);
        bridge.init(notAsked, mock(org.cryptomator.jfuse.api.FuseConfig.class));
        verify(notAsked).setWant(async);

        bridge.writebackCache(true);
        var capable = mock(org.cryptomator.jfuse.api.FuseConnInfo.class);
        when(capable.want()).thenReturn(async);
        when(capable.capable()).thenReturn(async | wbc);
        bridge.init(capable, mock(org.cryptomator.jfuse.api.FuseConfig.class));
        verify(capable).setWant(async | wbc);

        var incapable = mock(org.cryptomator.jfuse.api.FuseConnInfo.class);
        when(incapable.want()).thenReturn(async);
        when(incapable.capable()).thenReturn(async);
        bridge.init(incapable, mock(org.cryptomator.jfuse.api.FuseConfig.class));
        verify(incapable).setWant(async);
    }

    @Test
    void mountOptionsCarryTheWritebackCache() {
        FuseMountOptions options = FuseMountOptions.defaults();
        assertThat(options.writebackCache()).isFalse();
        assertThat(options.directIo()).isTrue();
        FuseMountOptions kernel = options.withDirectIo(false).withWritebackCache(true)
                .withFuseOptions(java.util.List.of("allow_other"));
        assertThat(kernel).isEqualTo(new FuseMountOptions(false, true, true, java.util.List.of("allow_other"), null,
                FuseMountOptions.DEFAULT_READ_AHEAD_BYTES));
        assertThat(options.readCache()).isTrue();
        assertThat(options.withReadCache(false)).isEqualTo(new FuseMountOptions(true, false, false, java.util.List.of(),
                null, FuseMountOptions.DEFAULT_READ_AHEAD_BYTES));
    }

    @Test
    void initTurnsOffAutoInvalDataOnlyWhereOpensMayCache() {
        int inval = org.cryptomator.jfuse.api.FuseConnInfo.FUSE_CAP_AUTO_INVAL_DATA;
        int async = org.cryptomator.jfuse.api.FuseConnInfo.FUSE_CAP_ASYNC_READ;
        var direct = mock(org.cryptomator.jfuse.api.FuseConnInfo.class);
        when(direct.want()).thenReturn(async | inval);
        bridge.readCache(true);
        bridge.init(direct, mock(org.cryptomator.jfuse.api.FuseConfig.class));
        verify(direct).setWant(async | inval);
        assertThat(bridge.perOpenCaching()).as("not bound: libfuse's direct_io for every open").isFalse();

        bridge.useExactNames();
        var perOpen = mock(org.cryptomator.jfuse.api.FuseConnInfo.class);
        when(perOpen.want()).thenReturn(async | inval);
        bridge.init(perOpen, mock(org.cryptomator.jfuse.api.FuseConfig.class));
        verify(perOpen).setWant(async);
        assertThat(bridge.perOpenCaching()).isTrue();
        assertThat(bridge.kernelDirectIo()).as("writes are still direct").isTrue();

        var kernel = new FuseBridge(fs, FuseBuilder.getSupported().errno(), 1000, 100, false);
        var cached = mock(org.cryptomator.jfuse.api.FuseConnInfo.class);
        when(cached.want()).thenReturn(async | inval);
        kernel.init(cached, mock(org.cryptomator.jfuse.api.FuseConfig.class));
        verify(cached).setWant(async);
        assertThat(kernel.kernelDirectIo()).isFalse();
    }

    @Test
    void readOnlyOpensOfFilesWithOneNameMayCacheAndEverythingElseBypasses() throws Exception {
        Info file = create("/c");
        write("/c", file, 0, "x");
        int rdonly = 0;
        int wronly = 01;
        int rdwr = 02;
        for (int flags : new int[] {rdonly, wronly, rdwr}) {
            Info open = new Info(flags);
            assertThat(bridge.open("/c", open)).isZero();
            assertThat(bridge.bypassesKernelCache(open.getFh(), flags)).as("flags %o", flags).isEqualTo(flags != rdonly);
        }
        assertThat(bridge.bypassesKernelCache(999_999, rdonly)).as("unknown handle").isTrue();

        var kernel = new FuseBridge(fs, FuseBuilder.getSupported().errno(), 1000, 100, false);
        Info writable = new Info(rdwr);
        assertThat(kernel.open("/c", writable)).isZero();
        assertThat(kernel.bypassesKernelCache(writable.getFh(), rdwr)).as("a kernel-cache mount caches writes").isFalse();
    }

    @Test
    void aFileWithTwoNamesAlwaysBypassesTheKernelCache() {
        assertThat(OpenCaching.bypasses(0, 2, true)).isTrue();
        assertThat(OpenCaching.bypasses(0, 2, false)).isTrue();
        assertThat(OpenCaching.bypasses(0, 1, true)).isFalse();
        assertThat(OpenCaching.bypasses(FuseBridge.O_DIRECT, 1, true)).as("O_DIRECT on a direct-I/O mount").isTrue();
        assertThat(OpenCaching.bypasses(FuseBridge.O_DIRECT, 1, false)).as("the kernel's own O_DIRECT").isFalse();
        assertThat(OpenCaching.bypasses(02, 1, false)).as("a kernel-cache mount caches writes").isFalse();
        assertThat(OpenCaching.bypasses(02, 1, true)).isTrue();
    }

    @Test
    void aFileLinkedSinceTheMountNeverKeepsTheKernelCache() {
        Info c = create("/c");
        Info d = create("/d");
        assertThat(bridge.keepsKernelCache(c.getFh())).isTrue();
        bridge.linked("/c");
        assertThat(bridge.keepsKernelCache(c.getFh())).isFalse();
        assertThat(bridge.keepsKernelCache(d.getFh())).isTrue();
        assertThat(bridge.keepsKernelCache(999_999)).as("unknown handle").isFalse();
    }

    @Test
    void setChangesOnlyDirectIoAndKeepCacheOfFuseFileInfo() {
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            var fi = arena.allocate(64);
            fi.set(java.lang.foreign.ValueLayout.JAVA_INT, 0, 0x8001);
            fi.set(java.lang.foreign.ValueLayout.JAVA_INT, 4, 0b1001);
            OpenCaching.set(fi, true, false);
            assertThat(fi.get(java.lang.foreign.ValueLayout.JAVA_INT, 4)).isEqualTo(0b1011);
            OpenCaching.set(fi, false, true);
            assertThat(fi.get(java.lang.foreign.ValueLayout.JAVA_INT, 4)).isEqualTo(0b1101);
            OpenCaching.set(fi, false, false);
            assertThat(fi.get(java.lang.foreign.ValueLayout.JAVA_INT, 4)).isEqualTo(0b1001);
            assertThat(fi.get(java.lang.foreign.ValueLayout.JAVA_INT, 0)).as("flags untouched").isEqualTo(0x8001);
        }
    }

    @Test
    void copyFileRangeCopiesBetweenOpenFilesAndRefusesFlagsAndUnknownHandles() {
        Info in = create("/in");
        write("/in", in, 0, "0123456789");
        Info out = create("/out");
        assertThat(bridge.copyFileRange("/in", in, 2, "/out", out, 1, 100, 0)).as("cut at EOF").isEqualTo(8);
        assertThat(read("/out", out, 0, 100)).isEqualTo("\u000023456789");
        assertThat(bridge.copyFileRange("/in", in, 10, "/out", out, 0, 5, 0)).as("at EOF").isZero();
        assertThat(bridge.copyFileRange("/in", in, 0, "/out", out, 0, 5, 1)).isEqualTo(-LinuxErrno.EINVAL);
        assertThat(bridge.copyFileRange("/in", null, 0, "/out", out, 0, 5, 0)).isEqualTo(-LinuxErrno.EBADF);
        assertThat(bridge.copyFileRange("/in", new Info(0), 0, "/out", out, 0, 5, 0)).isEqualTo(-LinuxErrno.EBADF);
    }

    @Test
    void getattrFillsTheStatFromTheFileSystem() {
        Info info = create("/f");
        write("/f", info, 0, "12345");
        Stat stat = mock(Stat.class, RETURNS_DEEP_STUBS);
        assertThat(bridge.getattr("/f", stat, null)).isZero();
        verify(stat).setMode(Stat.S_IFREG | 0644);
        verify(stat).setSize(5);
        verify(stat).setNLink((short) 1);
        verify(stat).setUid(1000);
        verify(stat).setGid(100);
        verify(stat.mTime()).set(any());

        Stat dir = mock(Stat.class, RETURNS_DEEP_STUBS);
        assertThat(bridge.getattr("/", dir, null)).isZero();
        verify(dir).setMode(Stat.S_IFDIR | 0755);

        assertThat(bridge.unlink("/f")).isZero();
        Stat unlinked = mock(Stat.class, RETURNS_DEEP_STUBS);
        assertThat(bridge.getattr("/f", unlinked, info)).as("fstat of an open, unlinked file").isZero();
        verify(unlinked).setNLink((short) 0);
        assertThat(bridge.getattr("/f", mock(Stat.class, RETURNS_DEEP_STUBS), null)).isEqualTo(-LinuxErrno.ENOENT);
    }

    @Test
    void readdirListsDotDotDotAndEntriesWithTheirTypes() throws IOException {
        assertThat(bridge.mkdir("/d", 0755)).isZero();
        create("/d/b");
        assertThat(bridge.mkdir("/d/a", 0755)).isZero();
        DirFiller filler = mock(DirFiller.class);
        List<String> names = new ArrayList<>();
        when(filler.fill(any(), any(), anyLong(), anyInt())).thenAnswer(call -> {
            names.add(call.getArgument(0));
            return 0;
        });
        org.mockito.Mockito.doAnswer(call -> names.add(call.getArgument(0))).when(filler).fill(any(String.class));
        assertThat(bridge.readdir("/d", filler, 0, null, 0)).isZero();
        assertThat(names).containsExactly(".", "..", "a", "b");
        assertThat(bridge.readdir("/d/b", filler, 0, null, 0)).isEqualTo(-LinuxErrno.ENOTDIR);
        assertThat(bridge.readdir("/missing", filler, 0, null, 0)).isEqualTo(-LinuxErrno.ENOENT);
    }

    /**
     * The fallback when {@link RawPathBinding} could not bind: paths are jfuse's lossy decoding, so a
     * U+FFFD may stand for any byte that is not UTF-8.
     */
    @Test
    void withJfusesLossyNamesAReplacementCharacterIsRefusedAndNamesThatAreNotUtf8AreNotListed() throws IOException {
        assertThat(bridge.exactNames()).isFalse();
        assertThat(bridge.create("/caf\uFFFD.txt", 0644, new Info(0))).isEqualTo(-LinuxErrno.EILSEQ);
        assertThat(bridge.mkdir("/d\uFFFD", 0755)).isEqualTo(-LinuxErrno.EILSEQ);
        assertThat(bridge.getattr("/caf\uFFFD.txt", mock(Stat.class, RETURNS_DEEP_STUBS), null))
                .isEqualTo(-LinuxErrno.EILSEQ);
        fs.create(FileNames.decode("/caf\u00e9.txt".getBytes(ISO_8859_1))).close();
        create("/plain");
        assertThat(readdirNames("/")).containsExactly(".", "..", "plain");

        bridge.useExactNames();
        assertThat(bridge.exactNames()).isTrue();
        create("/caf\uFFFD.txt");
        assertThat(readdirNames("/")).containsExactly(".", "..", "caf\uDCE9.txt", "caf\uFFFD.txt", "plain");
    }

    private List<String> readdirNames(String path) throws IOException {
        DirFiller filler = mock(DirFiller.class);
        List<String> names = new ArrayList<>();
        when(filler.fill(any(), any(), anyLong(), anyInt())).thenAnswer(call -> {
            names.add(call.getArgument(0));
            return 0;
        });
        org.mockito.Mockito.doAnswer(call -> names.add(call.getArgument(0))).when(filler).fill(any(String.class));
        assertThat(bridge.readdir(path, filler, 0, null, 0)).isZero();
        return names;
    }

    @Test
    void namespaceMistakesGetTheKernelsErrno() {
        assertThat(bridge.mkdir("/d", 0755)).isZero();
        assertThat(bridge.mkdir("/d", 0755)).isEqualTo(-LinuxErrno.EEXIST);
        create("/d/f");
        assertThat(bridge.rmdir("/d")).isEqualTo(-LinuxErrno.ENOTEMPTY);
        assertThat(bridge.rmdir("/d/f")).isEqualTo(-LinuxErrno.ENOTDIR);
        assertThat(bridge.unlink("/d")).isEqualTo(-LinuxErrno.EISDIR);
        assertThat(bridge.unlink("/nope")).isEqualTo(-LinuxErrno.ENOENT);
        assertThat(bridge.mkdir("/nope/x", 0755)).isEqualTo(-LinuxErrno.ENOENT);
        assertThat(bridge.open("/d", new Info(0))).isEqualTo(-LinuxErrno.EISDIR);
        assertThat(bridge.open("/nope", new Info(0))).isEqualTo(-LinuxErrno.ENOENT);
        assertThat(bridge.create("/d/f", 0644, new Info(FuseBridge.O_EXCL))).isEqualTo(-LinuxErrno.EEXIST);
        assertThat(bridge.create("/d/f", 0644, new Info(0))).as("O_CREAT without O_EXCL opens").isZero();
        assertThat(bridge.mkdir("/" + "n".repeat(256), 0755)).isEqualTo(-LinuxErrno.ENAMETOOLONG);
        assertThat(bridge.mkdir("/" + "é".repeat(128), 0755)).as("256 bytes of UTF-8").isEqualTo(-LinuxErrno.ENAMETOOLONG);
        assertThat(bridge.mkdir("/" + "n".repeat(255), 0755)).isZero();
    }

    @Test
    void renameReplacesUnlessNoReplaceAndExchanges() {
        create("/a");
        create("/b");
        Stat stat = mock(Stat.class, RETURNS_DEEP_STUBS);
        assertThat(bridge.rename("/a", "/b", FuseBridge.RENAME_NOREPLACE)).isEqualTo(-LinuxErrno.EEXIST);
        assertThat(bridge.rename("/a", "/b", FuseBridge.RENAME_NOREPLACE | FuseBridge.RENAME_EXCHANGE))
                .as("both flags").isEqualTo(-LinuxErrno.EINVAL);
        assertThat(bridge.rename("/a", "/b", 4)).as("RENAME_WHITEOUT").isEqualTo(-LinuxErrno.EINVAL);
        assertThat(bridge.rename("/a", "/missing", FuseBridge.RENAME_EXCHANGE)).isEqualTo(-LinuxErrno.ENOENT);
        assertThat(bridge.rename("/a", "/b", FuseBridge.RENAME_EXCHANGE)).isZero();
        assertThat(bridge.getattr("/a", stat, null)).isZero();
        assertThat(bridge.getattr("/b", stat, null)).isZero();
        assertThat(bridge.rename("/a", "/n", FuseBridge.RENAME_NOREPLACE)).isZero();
        assertThat(bridge.rename("/n", "/a", 0)).isZero();
        assertThat(bridge.rename("/a", "/b", 0)).isZero();
        assertThat(bridge.getattr("/a", mock(Stat.class, RETURNS_DEEP_STUBS), null)).isEqualTo(-LinuxErrno.ENOENT);
        assertThat(bridge.rename("/a", "/c", 0)).isEqualTo(-LinuxErrno.ENOENT);
        assertThat(bridge.mkdir("/d", 0755)).isZero();
        create("/d/x");
        assertThat(bridge.mkdir("/e", 0755)).isZero();
        assertThat(bridge.rename("/e", "/d", 0)).isEqualTo(-LinuxErrno.ENOTEMPTY);
    }

    @Test
    void truncateByPathOrHandleAndStatfs() {
        Info info = create("/t");
        write("/t", info, 0, "0123456789");
        assertThat(bridge.truncate("/t", 4, null)).isZero();
        assertThat(read("/t", info, 0, 100)).isEqualTo("0123");
        assertThat(bridge.truncate("/t", 6, info)).isZero();
        assertThat(read("/t", info, 0, 100)).isEqualTo("0123\0\0");
        assertThat(bridge.truncate("/missing", 0, null)).isEqualTo(-LinuxErrno.ENOENT);

        Statvfs statvfs = mock(Statvfs.class);
        assertThat(bridge.statfs("/", statvfs)).isZero();
        verify(statvfs).setBsize(4096);
        verify(statvfs).setNameMax(255);
        verify(statvfs).setBlocks(org.mockito.ArgumentMatchers.longThat(blocks -> blocks > 0));
    }

    /** Issue 12: df -i showed 0 inodes, as jfuse's Statvfs cannot set f_files and f_ffree. */
    @Test
    void statfsFillsTheInodeCounts() throws Exception {
        create("/one");
        Class<?> impl = Class.forName("org.cryptomator.jfuse.linux.amd64.StatvfsImpl");
        Class<?> layout = Class.forName("org.cryptomator.jfuse.linux.amd64.extr.fuse3.statvfs");
        long size = ((java.lang.foreign.MemoryLayout) layout.getMethod("layout").invoke(null)).byteSize();
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            var segment = arena.allocate(size);
            var constructor = impl.getDeclaredConstructor(java.lang.foreign.MemorySegment.class);
            constructor.setAccessible(true);
            Statvfs statvfs = (Statvfs) constructor.newInstance(segment);

            assertThat(bridge.statfs("/", statvfs)).isZero();

            var stat = fs.statfs();
            assertThat(stat.totalInodes()).isPositive();
            long files = (long) layout.getMethod("f_files", java.lang.foreign.MemorySegment.class).invoke(null, segment);
            long free = (long) layout.getMethod("f_ffree", java.lang.foreign.MemorySegment.class).invoke(null, segment);
            long available = (long) layout.getMethod("f_favail", java.lang.foreign.MemorySegment.class)
                    .invoke(null, segment);
            assertThat(files).isEqualTo(stat.totalInodes());
            assertThat(free).isEqualTo(stat.freeInodes()).isEqualTo(available);
        }
    }

    @Test
    void fallocateModes() {
        Info info = create("/f");
        write("/f", info, 0, "x".repeat(3 * 4096));
        int keep = FuseBridge.FALLOC_FL_KEEP_SIZE;
        assertThat(bridge.fallocate("/f", 0, 0, 8 * 4096, info)).isZero();
        assertThat(read("/f", info, 0, 10 * 4096)).hasSize(8 * 4096);
        assertThat(bridge.fallocate("/f", FuseBridge.FALLOC_FL_PUNCH_HOLE | keep, 4096, 4096, info)).isZero();
        assertThat(read("/f", info, 4096, 4096)).isEqualTo("\0".repeat(4096));
        assertThat(read("/f", info, 2 * 4096, 1)).isEqualTo("x");
        assertThat(bridge.fallocate("/f", FuseBridge.FALLOC_FL_ZERO_RANGE, 0, 10, info)).isZero();
        assertThat(read("/f", info, 0, 11)).isEqualTo("\0".repeat(10) + "x");
        assertThat(bridge.fallocate("/f", FuseBridge.FALLOC_FL_PUNCH_HOLE, 0, 4096, info))
                .as("punch without KEEP_SIZE").isEqualTo(-LinuxErrno.EOPNOTSUPP);
        assertThat(bridge.fallocate("/f", 0x08, 0, 4096, info)).as("COLLAPSE_RANGE").isEqualTo(-LinuxErrno.EOPNOTSUPP);
        assertThat(bridge.fallocate("/f", FuseBridge.FALLOC_FL_UNSHARE_RANGE, 0, 4096, info))
                .as("unshare without copy-on-write").isEqualTo(-LinuxErrno.EOPNOTSUPP);
        assertThat(bridge.fallocate("/f", 0, -1, 4096, info)).isEqualTo(-LinuxErrno.EINVAL);
        assertThat(bridge.fallocate("/f", 0, 0, 0, info)).isEqualTo(-LinuxErrno.EINVAL);
    }

    @Test
    void noSpaceIsEnospc() {
        Info info = create("/big");
        ByteBuffer chunk = ByteBuffer.allocate(1 << 20);
        int result = 0;
        for (int i = 0; i < 8 && result >= 0; i++) {
            result = bridge.write("/big", chunk.clear(), chunk.capacity(), (long) i << 20, info);
        }
        assertThat(result).isEqualTo(-LinuxErrno.ENOSPC);
    }

    /** snapfs keeps POSIX attributes: explicit times are kept to the nanosecond, omitted ones left alone. */
    @Test
    void utimensSetsNowLeavesOmittedTimesAndKeepsExplicitOnes() throws IOException {
        create("/f");
        java.time.Instant created = fs.lstat("/f").mtime();
        java.time.Instant explicitTime = java.time.Instant.parse("2001-02-03T04:05:06.123456789Z");
        TimeSpec now = mock(TimeSpec.class);
        when(now.isUtimeNow()).thenReturn(true);
        TimeSpec omit = mock(TimeSpec.class);
        when(omit.isUtimeOmit()).thenReturn(true);
        TimeSpec explicit = mock(TimeSpec.class);
        when(explicit.get()).thenReturn(explicitTime);

        assertThat(bridge.utimens("/f", explicit, omit, null)).isZero();
        assertThat(fs.lstat("/f").atime()).isEqualTo(explicitTime);
        assertThat(fs.lstat("/f").mtime()).isEqualTo(created);

        assertThat(bridge.utimens("/f", omit, explicit, null)).isZero();
        assertThat(fs.lstat("/f").mtime()).isEqualTo(explicitTime);
        assertThat(fs.lstat("/f").atime()).isEqualTo(explicitTime);

        java.time.Instant beforeNow = java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        assertThat(bridge.utimens("/f", now, omit, null)).isZero();
        assertThat(fs.lstat("/f").atime()).isAfterOrEqualTo(beforeNow);
        assertThat(fs.lstat("/f").mtime()).isEqualTo(explicitTime);
        assertThat(bridge.utimens("/missing", now, now, null)).isEqualTo(-LinuxErrno.ENOENT);
    }

    @Test
    void anExceptionNeverEscapesIntoLibfuse() throws IOException {
        IomapFileSystem broken = mock(IomapFileSystem.class);
        when(broken.lstat(any())).thenThrow(new IllegalStateException("a bug"));
        when(broken.readdir(any())).thenThrow(new StackOverflowError());
        when(broken.statfs()).thenThrow(new CorruptFilesystemException("bad checksum"));
        var brokenBridge = new FuseBridge(broken, FuseBuilder.getSupported().errno(), 0, 0, false);
        assertThat(brokenBridge.getattr("/x", mock(Stat.class), null)).isEqualTo(-LinuxErrno.EIO);
        assertThat(brokenBridge.readdir("/", mock(DirFiller.class), 0, null, 0)).isEqualTo(-LinuxErrno.EIO);
        assertThat(brokenBridge.statfs("/", mock(Statvfs.class))).isEqualTo(-LinuxErrno.EUCLEAN);
        assertThat(brokenBridge.write("/x", ByteBuffer.allocate(1), 1, 0, null)).isEqualTo(-LinuxErrno.EIO);
        verify(broken).lstat(eq("/x"));
    }
}
