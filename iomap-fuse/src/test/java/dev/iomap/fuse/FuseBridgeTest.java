package dev.iomap.fuse;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The bridge's low-level operations called directly (no kernel), over snapfs on a RAM device. */
class FuseBridgeTest {
    static final long ROOT = Nodes.ROOT;
    static final int O_RDWR = 2;
    static final InodeOperations.Caller ROOT_USER = new InodeOperations.Caller(0, 0);
    static final InodeOperations.Caller USER = new InodeOperations.Caller(4321, 765);
    static final CacheMode DEFAULT = CacheMode.of(FuseMountOptions.defaults(), true);

    RamBlockDevice device;
    IomapFileSystem fs;
    FuseBridge bridge;
    final List<Long> invalidated = new ArrayList<>();

    @BeforeEach
    void mount() throws IOException {
        device = new RamBlockDevice(512, 4L << 20);
        IomapFileSystems.format(SnapAdapter.NAME, device, FormatOptions.blockSize(4096));
        fs = IomapFileSystems.mount(SnapAdapter.NAME, device, MountOptions.defaults());
        bridge = new FuseBridge(fs, new InodeOperations.Caller(1000, 100), DEFAULT);
        bridge.onAttributesChanged(invalidated::add);
    }

    @AfterEach
    void unmount() throws IOException {
        bridge.releaseAll();
        fs.close();
        device.close();
    }

    @FunctionalInterface
    interface Call {
        void run() throws Exception;
    }

    /** @return 0, or the negated errno of what {@code call} threw ({@link ErrnoMapping}) */
    static int errno(Call call) {
        try {
            call.run();
            return 0;
        } catch (Exception e) {
            return -ErrnoMapping.errno(e);
        }
    }

    private FuseBridge.Created create(long parent, String name, int mode) throws IOException {
        return bridge.create(parent, name, mode, O_RDWR, USER);
    }

    private int write(long fh, long offset, String text) throws IOException {
        return bridge.write(fh, offset, ByteBuffer.wrap(text.getBytes(UTF_8)), false);
    }

    private String read(long fh, long offset, int size) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(size);
        int n = bridge.read(fh, offset, buf);
        return new String(buf.array(), 0, n, UTF_8);
    }

    @Test
    void createWriteReadFsyncRelease() throws Exception {
        FuseBridge.Created created = create(ROOT, "f", 0644);
        long fh = created.opened().fh();
        assertThat(created.entry().nodeid()).isEqualTo(bridge.nodes().nodeid(fs.lstat("/f").ino()));
        assertThat(created.entry().attributes().ino()).isEqualTo(fs.lstat("/f").ino());
        assertThat(created.entry().attributes().uid()).isEqualTo(USER.uid());
        assertThat(created.entry().attributes().mode()).isEqualTo(0100644);
        assertThat(bridge.nodes().lookups(created.entry().nodeid())).isOne();
        assertThat(write(fh, 0, "hello, fuse")).isEqualTo(11);
        assertThat(read(fh, 7, 100)).isEqualTo("fuse");
        assertThat(read(fh, 11, 100)).isEmpty();
        bridge.fsync(fh, true);
        bridge.fsync(fh, false);
        bridge.flush(fh);
        assertThat(bridge.openFiles()).isEqualTo(1);
        bridge.release(fh);
        assertThat(bridge.openFiles()).isZero();
        assertThat(errno(() -> bridge.read(fh, 0, ByteBuffer.allocate(1)))).isEqualTo(-LinuxErrno.EBADF);

        FuseBridge.Opened again = bridge.open(created.entry().nodeid(), 0, USER);
        assertThat(read(again.fh(), 0, 5)).isEqualTo("hello");
    }

    /** A hard link is one inode: every name gives the same node id, and each reply counts one lookup. */
    @Test
    void aHardLinkIsOneNodeAndForgetDropsItsLookups() throws Exception {
        FuseBridge.Created created = create(ROOT, "a", 0644);
        long nodeid = created.entry().nodeid();
        bridge.release(created.opened().fh());
        FuseBridge.Entry linked = bridge.link(nodeid, ROOT, "b");
        FuseBridge.Entry looked = bridge.lookup(ROOT, "b");

        assertThat(linked.nodeid()).isEqualTo(nodeid);
        assertThat(looked.nodeid()).isEqualTo(nodeid);
        assertThat(looked.attributes().linkCount()).isEqualTo(2);
        assertThat(bridge.nodes().lookups(nodeid)).isEqualTo(3);

        bridge.unlink(ROOT, "a");
        assertThat(bridge.getattr(nodeid, 0).linkCount()).as("reached through its other name").isOne();
        bridge.forget(nodeid, 3);
        assertThat(bridge.nodes().lookups(nodeid)).isZero();
        assertThat(bridge.nodes().size()).as("only the root is left").isOne();
    }

    /** unlink of an open file needs no hidden rename: the name goes, the open file stays usable. */
    @Test
    void anUnlinkedOpenFileStaysReadableAndGetattrAnswersFromIt() throws Exception {
        FuseBridge.Created created = create(ROOT, "open", 0644);
        long fh = created.opened().fh();
        long nodeid = created.entry().nodeid();
        write(fh, 0, "still here");

        bridge.unlink(ROOT, "open");

        assertThat(bridge.listing(bridge.opendir(ROOT)).entries()).extracting(DirEntry::name).isEmpty();
        assertThat(bridge.getattr(nodeid, 0).linkCount()).isZero();
        assertThat(bridge.getattr(nodeid, 0).size()).isEqualTo(10);
        assertThat(read(fh, 0, 100)).isEqualTo("still here");
        assertThat(errno(() -> bridge.lookup(ROOT, "open"))).isEqualTo(-LinuxErrno.ENOENT);
        bridge.release(fh);
        bridge.forget(nodeid, 1);
        assertThat(errno(() -> bridge.getattr(nodeid, 0))).isEqualTo(-LinuxErrno.ENOENT);
    }

    /**
     * An open directory that a rename replaced, or rmdir removed, still answers getattr, with no links, as
     * a kernel file system's (xfstests generic/035: fstat on it failed with ENOENT); once closed, ENOENT.
     */
    @Test
    void anOpenDirectoryReplacedByARenameStillAnswersGetattrWithNoLinks() throws Exception {
        bridge.mkdir(ROOT, "dir1", 0755, USER);
        long replaced = bridge.mkdir(ROOT, "dir2", 0755, USER).nodeid();
        long removed = bridge.mkdir(ROOT, "dir3", 0755, USER).nodeid();
        long replacedHandle = bridge.opendir(replaced);
        long removedHandle = bridge.opendir(removed);

        bridge.rename(ROOT, "dir1", ROOT, "dir2", 0);
        bridge.rmdir(ROOT, "dir3");

        for (long nodeid : new long[] {replaced, removed}) {
            Attributes attributes = bridge.getattr(nodeid, 0);
            assertThat(attributes.linkCount()).as("node %d", nodeid).isZero();
            assertThat(attributes.mode() & 0170000).isEqualTo(0040000);
        }
        bridge.releasedir(replacedHandle);
        bridge.releasedir(removedHandle);
        assertThat(errno(() -> bridge.getattr(replaced, 0))).isEqualTo(-LinuxErrno.ENOENT);
    }

    /** A name another node replaced (the image changed behind the kernel) is ESTALE: the kernel looks again. */
    @Test
    void aNodeWhoseNameNowNamesAnotherInodeIsStale() throws Exception {
        FuseBridge.Created a = create(ROOT, "a", 0644);
        bridge.release(a.opened().fh());
        bridge.release(create(ROOT, "b", 0644).opened().fh());
        fs.rename("/b", "/a");

        long nodeid = a.entry().nodeid();
        assertThat(errno(() -> bridge.getattr(nodeid, 0))).isEqualTo(-LinuxErrno.ESTALE);
        assertThat(errno(() -> bridge.open(nodeid, O_RDWR | FuseBridge.O_TRUNC, USER))).isEqualTo(-LinuxErrno.ESTALE);
        assertThat(bridge.lookup(ROOT, "a").nodeid()).isNotEqualTo(nodeid);
    }

    /** Paths are built from names: renaming a directory moves every path below it. */
    @Test
    void renamingADirectoryMovesThePathsOfWhatIsInIt() throws Exception {
        FuseBridge.Entry dir = bridge.mkdir(ROOT, "d", 0755, USER);
        FuseBridge.Created file = create(dir.nodeid(), "f", 0600);
        write(file.opened().fh(), 0, "x");

        bridge.rename(ROOT, "d", ROOT, "e", 0);

        assertThat(bridge.getattr(file.entry().nodeid(), 0).size()).isOne();
        assertThat(bridge.lookup(dir.nodeid(), "f").nodeid()).isEqualTo(file.entry().nodeid());
        assertThat(fs.lstat("/e/f").ino()).isEqualTo(file.entry().attributes().ino());
        assertThat(errno(() -> bridge.lookup(ROOT, "d"))).isEqualTo(-LinuxErrno.ENOENT);
    }

    @Test
    void renameReplacesUnlessNoReplaceAndExchanges() throws Exception {
        long a = create(ROOT, "a", 0644).entry().nodeid();
        long b = create(ROOT, "b", 0644).entry().nodeid();
        assertThat(errno(() -> bridge.rename(ROOT, "a", ROOT, "b", FuseBridge.RENAME_NOREPLACE)))
                .isEqualTo(-LinuxErrno.EEXIST);
        bridge.rename(ROOT, "a", ROOT, "b", FuseBridge.RENAME_EXCHANGE);
        assertThat(bridge.lookup(ROOT, "a").nodeid()).isEqualTo(b);
        assertThat(bridge.lookup(ROOT, "b").nodeid()).isEqualTo(a);
        bridge.rename(ROOT, "a", ROOT, "b", 0);
        assertThat(bridge.lookup(ROOT, "b").nodeid()).isEqualTo(b);
        assertThat(errno(() -> bridge.rename(ROOT, "b", ROOT, "c", 3))).isEqualTo(-LinuxErrno.EINVAL);
        assertThat(errno(() -> bridge.rename(ROOT, "b", ROOT, "c", 4))).isEqualTo(-LinuxErrno.EINVAL);
    }

    @Test
    void namespaceMistakesGetTheKernelsErrno() throws Exception {
        bridge.mkdir(ROOT, "d", 0755, USER);
        long d = bridge.lookup(ROOT, "d").nodeid();
        create(d, "f", 0644);
        assertThat(errno(() -> bridge.lookup(ROOT, "missing"))).isEqualTo(-LinuxErrno.ENOENT);
        assertThat(errno(() -> bridge.mkdir(ROOT, "d", 0755, USER))).isEqualTo(-LinuxErrno.EEXIST);
        assertThat(errno(() -> bridge.rmdir(ROOT, "d"))).isEqualTo(-LinuxErrno.ENOTEMPTY);
        assertThat(errno(() -> bridge.unlink(ROOT, "d"))).isEqualTo(-LinuxErrno.EISDIR);
        assertThat(errno(() -> bridge.lookup(ROOT, "x".repeat(256)))).isEqualTo(-LinuxErrno.ENAMETOOLONG);
        assertThat(errno(() -> bridge.mknod(ROOT, "fifo", 0010644, 0, USER))).isEqualTo(-LinuxErrno.EPERM);
        assertThat(bridge.mknod(ROOT, "plain", 0100600, 0, USER).attributes().mode()).isEqualTo(0100600);
    }

    /** Names are bytes: one that is not UTF-8 goes in and comes back as the same bytes. */
    @Test
    void namesThatAreNotUtf8AreKeptByteForByte() throws Exception {
        String latin1 = dev.iomap.api.FileNames.decode(new byte[] {'c', 'a', 'f', (byte) 0xe9});
        String other = dev.iomap.api.FileNames.decode(new byte[] {'c', 'a', 'f', (byte) 0xe8});
        create(ROOT, latin1, 0644);
        create(ROOT, other, 0644);
        assertThat(bridge.listing(bridge.opendir(ROOT)).entries()).extracting(DirEntry::name)
                .containsExactlyInAnyOrder(latin1, other);
        assertThat(bridge.lookup(ROOT, latin1).nodeid()).isNotEqualTo(bridge.lookup(ROOT, other).nodeid());
    }

    /** A listing is taken once at opendir and again when readdir starts over (rewinddir). */
    @Test
    void readdirFromOffsetZeroAgainListsAgain() throws Exception {
        create(ROOT, "a", 0644);
        long dh = bridge.opendir(ROOT);
        assertThat(bridge.listing(dh, 0).entries()).extracting(DirEntry::name).containsExactly("a");
        create(ROOT, "b", 0644);
        assertThat(bridge.listing(dh, 3).entries()).extracting(DirEntry::name).containsExactly("a");
        assertThat(bridge.listing(dh, 0).entries()).extracting(DirEntry::name).containsExactly("a", "b");
        bridge.releasedir(dh);
        assertThat(errno(() -> bridge.listing(dh, 0))).isEqualTo(-LinuxErrno.EBADF);
    }

    /**
     * Names added after opendir and before the first readdir are listed (POSIX's rewinddir, xfstests'
     * generic/471: opendir, create, rewinddir, readdir); an unchanged directory is listed once.
     */
    @Test
    void namesAddedBetweenOpendirAndTheFirstReaddirAreListed() throws Exception {
        create(ROOT, "a", 0644);
        long dh = bridge.opendir(ROOT);
        create(ROOT, "b", 0644);
        assertThat(bridge.listing(dh, 0).entries()).extracting(DirEntry::name).containsExactly("a", "b");
        bridge.releasedir(dh);

        long unchanged = bridge.opendir(ROOT);
        Directories.Listing taken = bridge.listing(unchanged);
        assertThat(bridge.listing(unchanged, 0)).as("the listing opendir took").isSameAs(taken);
        bridge.releasedir(unchanged);
    }

    /** readdirplus counts a lookup only for what went into the reply. */
    @Test
    void describeCountsNothingAndHandedOutCountsOneLookup() throws Exception {
        FuseBridge.Created created = create(ROOT, "f", 0644);
        bridge.forget(created.entry().nodeid(), 1);
        DirEntry listed = bridge.listing(bridge.opendir(ROOT)).entries().getFirst();
        FuseBridge.Entry entry = bridge.describe(ROOT, listed);
        assertThat(entry.nodeid()).isEqualTo(created.entry().nodeid());
        assertThat(bridge.nodes().lookups(entry.nodeid())).isZero();
        bridge.handedOut(ROOT, listed.name(), entry);
        assertThat(bridge.nodes().lookups(entry.nodeid())).isOne();
        assertThat(bridge.describe(ROOT, new DirEntry("gone", 99, dev.iomap.api.FileType.REGULAR))).isNull();
    }

    /** FUSE_WRITE_KILL_SUIDGID: set-user-ID goes, and set-group-ID with group execute; the kernel is told. */
    @Test
    void aWriteTheKernelMarksClearsSetUserIdAndTellsTheKernel() throws Exception {
        FuseBridge.Created created = create(ROOT, "suid", 06755);
        long fh = created.opened().fh();
        long nodeid = created.entry().nodeid();
        assertThat(fs.lstat("/suid").mode()).isEqualTo(06755);

        bridge.write(fh, 0, ByteBuffer.wrap(new byte[] {1}), false);
        assertThat(fs.lstat("/suid").mode()).as("a privileged writer keeps the bits").isEqualTo(06755);
        assertThat(invalidated).isEmpty();

        bridge.write(fh, 1, ByteBuffer.wrap(new byte[] {2}), true);
        assertThat(fs.lstat("/suid").mode()).isEqualTo(0755);
        assertThat(invalidated).containsExactly(nodeid);
        assertThat(read(fh, 0, 2).getBytes(UTF_8)).containsExactly(1, 2);
    }

    /** File capabilities go with any write, truncate or chown (FUSE_HANDLE_KILLPRIV_V2: the file system's job). */
    @Test
    void aWriteATruncateAndAChownRemoveFileCapabilities() throws Exception {
        FuseBridge.Created created = create(ROOT, "cap", 0755);
        long nodeid = created.entry().nodeid();
        bridge.release(created.opened().fh());
        byte[] capability = {1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        bridge.setxattr(nodeid, InodeOperations.SECURITY_CAPABILITY, capability, 0);
        FuseBridge.Opened reader = bridge.open(nodeid, 0, ROOT_USER);
        bridge.read(reader.fh(), 0, ByteBuffer.allocate(1));
        assertThat(bridge.getxattr(nodeid, InodeOperations.SECURITY_CAPABILITY)).as("a read keeps them")
                .isEqualTo(capability);
        FuseBridge.Opened writer = bridge.open(nodeid, O_RDWR, ROOT_USER);
        bridge.write(writer.fh(), 0, ByteBuffer.wrap(new byte[] {1}), false);
        assertThat(errno(() -> bridge.getxattr(nodeid, InodeOperations.SECURITY_CAPABILITY)))
                .as("root's write too").isEqualTo(-LinuxErrno.ENODATA);

        bridge.setxattr(nodeid, InodeOperations.SECURITY_CAPABILITY, capability, 0);
        bridge.setattr(nodeid, new SetAttributes(null, null, null, 0L, null, null, false), 0);
        assertThat(errno(() -> bridge.getxattr(nodeid, InodeOperations.SECURITY_CAPABILITY)))
                .isEqualTo(-LinuxErrno.ENODATA);
        bridge.setxattr(nodeid, InodeOperations.SECURITY_CAPABILITY, capability, 0);
        bridge.setattr(nodeid, new SetAttributes(null, 0, null, null, null, null, false), 0);
        assertThat(errno(() -> bridge.getxattr(nodeid, InodeOperations.SECURITY_CAPABILITY)))
                .isEqualTo(-LinuxErrno.ENODATA);
    }

    @Test
    void setGroupIdWithoutGroupExecuteIsMandatoryLockingAndStays() throws Exception {
        FuseBridge.Created created = create(ROOT, "sgid", 02644);
        bridge.write(created.opened().fh(), 0, ByteBuffer.wrap(new byte[] {1}), true);
        assertThat(fs.lstat("/sgid").mode()).isEqualTo(02644);
    }

    /** With FUSE_HANDLE_KILLPRIV_V2 a chown clears set-user-ID itself, and a marked truncate too. */
    @Test
    void chownAndAMarkedTruncateClearSetUserId() throws Exception {
        long nodeid = create(ROOT, "c", 04755).entry().nodeid();
        bridge.setattr(nodeid, new SetAttributes(null, 77, null, null, null, null, false), 0);
        assertThat(fs.lstat("/c").mode()).isEqualTo(0755);
        assertThat(fs.lstat("/c").uid()).isEqualTo(77);

        bridge.setattr(nodeid, new SetAttributes(04755, null, null, null, null, null, false), 0);
        bridge.setattr(nodeid, new SetAttributes(null, null, null, 0L, null, null, false), 0);
        assertThat(fs.lstat("/c").mode()).as("an unmarked truncate").isEqualTo(04755);
        Attributes after = bridge.setattr(nodeid, new SetAttributes(null, null, null, 0L, null, null, true), 0);
        assertThat(after.mode()).isEqualTo(0100755);
    }

    @Test
    void setattrTruncatesSetsModesAndTimes() throws Exception {
        FuseBridge.Created created = create(ROOT, "t", 0644);
        long fh = created.opened().fh();
        long nodeid = created.entry().nodeid();
        write(fh, 0, "0123456789");
        bridge.setattr(nodeid, new SetAttributes(null, null, null, 4L, null, null, false), 0);
        assertThat(read(fh, 0, 100)).isEqualTo("0123");
        bridge.setattr(nodeid, new SetAttributes(null, null, null, 6L, null, null, false), fh);
        assertThat(read(fh, 0, 100)).isEqualTo("0123\0\0");

        Instant explicit = Instant.parse("2001-02-03T04:05:06.123456789Z");
        Attributes set = bridge.setattr(nodeid, new SetAttributes(0600, null, null, null, explicit, null, false), 0);
        assertThat(set.mode()).isEqualTo(0100600);
        assertThat(set.atime()).isEqualTo(explicit);
        Instant before = Instant.now().minusSeconds(1);
        set = bridge.setattr(nodeid, new SetAttributes(null, null, null, null, null, SetAttributes.NOW, false), 0);
        assertThat(set.mtime()).isAfter(before);
        assertThat(set.atime()).isEqualTo(explicit);
    }

    @Test
    void fallocateSeekCopyAndStatfs() throws Exception {
        long fh = create(ROOT, "f", 0644).opened().fh();
        write(fh, 0, "x".repeat(3 * 4096));
        int keep = FuseBridge.FALLOC_FL_KEEP_SIZE;
        bridge.fallocate(fh, FuseBridge.FALLOC_FL_PUNCH_HOLE | keep, 4096, 4096, ROOT_USER);
        assertThat(read(fh, 4096, 4096)).isEqualTo("\0".repeat(4096));
        assertThat(errno(() -> bridge.fallocate(fh, FuseBridge.FALLOC_FL_PUNCH_HOLE, 0, 4096, ROOT_USER)))
                .as("punch without KEEP_SIZE").isEqualTo(-LinuxErrno.EOPNOTSUPP);
        assertThat(errno(() -> bridge.fallocate(fh, 0x08, 0, 4096, ROOT_USER))).isEqualTo(-LinuxErrno.EOPNOTSUPP);
        assertThat(errno(() -> bridge.fallocate(fh, 0, -1, 4096, ROOT_USER))).isEqualTo(-LinuxErrno.EINVAL);
        assertThat(bridge.lseek(fh, 5, FuseBridge.SEEK_SET)).isEqualTo(5);
        assertThat(errno(() -> bridge.lseek(fh, 0, 1))).isEqualTo(-LinuxErrno.EINVAL);
        assertThat(errno(() -> bridge.lseek(fh, 1 << 20, FuseBridge.SEEK_DATA))).isEqualTo(-LinuxErrno.ENXIO);
        assertThat(errno(() -> bridge.lseek(fh, -1, FuseBridge.SEEK_DATA))).as("xfstests generic/448, 18.02")
                .isEqualTo(-LinuxErrno.ENXIO);
        assertThat(errno(() -> bridge.lseek(fh, -4096, FuseBridge.SEEK_HOLE))).as("xfstests generic/448, 18.01")
                .isEqualTo(-LinuxErrno.ENXIO);

        long out = create(ROOT, "g", 0644).opened().fh();
        assertThat(bridge.copyFileRange(fh, 0, out, 0, 10, 0)).isEqualTo(10);
        assertThat(read(out, 0, 100)).isEqualTo("x".repeat(10));
        assertThat(errno(() -> bridge.copyFileRange(fh, 0, out, 0, 10, 1))).isEqualTo(-LinuxErrno.EINVAL);
        assertThat(errno(() -> bridge.copyFileRange(fh, 0, 999, 0, 10, 0))).isEqualTo(-LinuxErrno.EBADF);

        FuseBridge.Statfs statfs = bridge.statfs();
        assertThat(statfs.blockSize()).isEqualTo(4096);
        assertThat(statfs.files()).isEqualTo(fs.statfs().totalInodes()).isPositive();
        assertThat(statfs.freeFiles()).isEqualTo(fs.statfs().freeInodes());
    }

    @Test
    void noSpaceIsEnospc() throws Exception {
        long fh = create(ROOT, "big", 0644).opened().fh();
        ByteBuffer chunk = ByteBuffer.allocate(1 << 20);
        int result = 0;
        for (int i = 0; i < 8 && result == 0; i++) {
            long offset = (long) i << 20;
            result = errno(() -> bridge.write(fh, offset, chunk.clear(), false));
        }
        assertThat(result).isEqualTo(-LinuxErrno.ENOSPC);
    }

    /** Which opens bypass the kernel's page cache, in each cache mode. */
    @Test
    void cacheModesChooseDirectIoPerOpen() throws Exception {
        int oDirect = FuseBridge.O_DIRECT;
        assertThat(DEFAULT.bypasses(0, oDirect)).as("read-only").isFalse();
        assertThat(DEFAULT.bypasses(O_RDWR, oDirect)).isTrue();
        assertThat(DEFAULT.bypasses(1, oDirect)).as("write-only").isTrue();
        assertThat(DEFAULT.bypasses(oDirect, oDirect)).as("O_DIRECT").isTrue();
        CacheMode noReadCache = CacheMode.of(FuseMountOptions.defaults().withReadCache(false), true);
        assertThat(noReadCache.bypasses(0, oDirect)).isTrue();
        CacheMode oldKernel = CacheMode.of(FuseMountOptions.defaults(), false);
        assertThat(oldKernel.bypasses(0, oDirect)).as("before Linux 6.6").isTrue();
        CacheMode kernel = CacheMode.of(FuseMountOptions.defaults().withDirectIo(false), true);
        assertThat(kernel.mode()).isEqualTo(CacheMode.Mode.KERNEL);
        assertThat(kernel.bypasses(O_RDWR, oDirect)).isFalse();
        CacheMode writeback = CacheMode.of(FuseMountOptions.defaults().withDirectIo(false).withWritebackCache(true),
                true);
        assertThat(writeback.writebackCache()).isTrue();
        CacheMode shared = CacheMode.of(FuseMountOptions.defaults().withDirectIo(false).withSharedImage(true), true);
        assertThat(shared.mode()).isEqualTo(CacheMode.Mode.DIRECT);
        assertThat(shared.bypasses(0, oDirect)).isTrue();
        assertThat(shared.attributeTimeout()).isZero();
        assertThat(DEFAULT.attributeTimeout()).isEqualTo(1.0);

        FuseBridge.Created created = create(ROOT, "f", 0644);
        assertThat(created.opened().directIo()).isTrue();
        FuseBridge.Opened reader = bridge.open(created.entry().nodeid(), 0, USER);
        assertThat(reader.directIo()).isFalse();
        assertThat(reader.keepCache()).isTrue();
    }

    /** An open with O_TRUNC by a caller other than root clears set-user-ID (no CAP_FSETID assumed). */
    @Test
    void aTruncatingOpenByAUserClearsSetUserId() throws Exception {
        FuseBridge.Created created = create(ROOT, "s", 04755);
        bridge.release(created.opened().fh());
        bridge.open(created.entry().nodeid(), O_RDWR | FuseBridge.O_TRUNC, ROOT_USER);
        assertThat(fs.lstat("/s").mode()).isEqualTo(04755);
        bridge.open(created.entry().nodeid(), O_RDWR | FuseBridge.O_TRUNC, USER);
        assertThat(fs.lstat("/s").mode()).isEqualTo(0755);
    }

    /**
     * A fallocate by a caller other than root clears set-user-ID, and set-group-ID where group execute is
     * set or the caller is not in the file's group (xfstests generic/683-685, Linux 6.2's rule); root's keeps
     * them (CAP_FSETID).
     */
    @Test
    void aFallocateByAUserClearsSetUserIdAndSetGroupIdAsLinuxDoes() throws Exception {
        FuseBridge.Created created = create(ROOT, "s", 06775);
        long fh = created.opened().fh();
        long nodeid = created.entry().nodeid();
        int group = fs.lstat("/s").gid();
        bridge.fallocate(fh, 0, 0, 4096, ROOT_USER);
        assertThat(fs.lstat("/s").mode()).isEqualTo(06775);
        bridge.fallocate(fh, FuseBridge.FALLOC_FL_PUNCH_HOLE | FuseBridge.FALLOC_FL_KEEP_SIZE, 0, 4096,
                new InodeOperations.Caller(4321, group));
        assertThat(fs.lstat("/s").mode()).as("group execute: set-group-ID goes too").isEqualTo(0775);

        bridge.setattr(nodeid, new SetAttributes(06765, null, null, null, null, null, false), 0);
        bridge.fallocate(fh, FuseBridge.FALLOC_FL_ZERO_RANGE, 0, 4096, new InodeOperations.Caller(4321, group));
        assertThat(fs.lstat("/s").mode()).as("no group execute, caller in the group").isEqualTo(02765);

        bridge.setattr(nodeid, new SetAttributes(06766, null, null, null, null, null, false), 0);
        bridge.fallocate(fh, 0, 0, 8192, new InodeOperations.Caller(4321, group + 1));
        assertThat(fs.lstat("/s").mode()).as("no group execute, caller not in the group").isEqualTo(0766);
    }

    @Test
    void xattrsAndSymlinks() throws Exception {
        long nodeid = create(ROOT, "f", 0644).entry().nodeid();
        bridge.setxattr(nodeid, "user.k", "v".getBytes(UTF_8), 0);
        assertThat(bridge.getxattr(nodeid, "user.k")).containsExactly('v');
        assertThat(bridge.listxattr(nodeid)).containsExactly("user.k\0".getBytes(UTF_8));
        assertThat(errno(() -> bridge.setxattr(nodeid, "user.k", new byte[0], InodeOperations.XATTR_CREATE)))
                .isEqualTo(-LinuxErrno.EEXIST);
        bridge.removexattr(nodeid, "user.k");
        assertThat(errno(() -> bridge.getxattr(nodeid, "user.k"))).isEqualTo(-LinuxErrno.ENODATA);

        FuseBridge.Entry link = bridge.symlink("f", ROOT, "l", USER);
        assertThat(link.attributes().mode()).isEqualTo(0120777);
        assertThat(bridge.readlink(link.nodeid())).containsExactly("f".getBytes(UTF_8));
        assertThat(errno(() -> bridge.readlink(nodeid))).isEqualTo(-LinuxErrno.EINVAL);
    }
}
