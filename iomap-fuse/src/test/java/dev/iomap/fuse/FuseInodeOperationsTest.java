package dev.iomap.fuse;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.RETURNS_DEEP_STUBS;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoMoreInteractions;
import static org.mockito.Mockito.when;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.XattrMode;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NotLinkException;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import org.cryptomator.jfuse.api.FuseBuilder;
import org.cryptomator.jfuse.api.Stat;
import org.cryptomator.jfuse.api.TimeSpec;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;

/**
 * The bridge's inode operations over a mocked file system that declares POSIX attributes, symbolic
 * links, hard links and extended attributes: exactly which API call each FUSE operation makes, and the
 * errno and buffer contents it answers with.
 */
class FuseInodeOperationsTest {
    private static final Instant ATIME = Instant.ofEpochSecond(1_700_000_000L, 123_456_789);
    private static final Instant MTIME = Instant.ofEpochSecond(1_600_000_000L, 1);
    private static final Instant CTIME = Instant.ofEpochSecond(1_650_000_000L, 999_999_999);
    private static final Instant BTIME = Instant.ofEpochSecond(1_500_000_000L);

    IomapFileSystem fs;
    FuseBridge bridge;

    @BeforeEach
    void setUp() throws Exception {
        fs = mock(IomapFileSystem.class);
        when(fs.capabilities()).thenReturn(EnumSet.of(Capability.DIRECTORIES, Capability.POSIX_ATTRIBUTES,
                Capability.SYMLINKS, Capability.HARD_LINKS, Capability.XATTRS));
        when(fs.adapterName()).thenReturn("mockfs");
        when(fs.lstat("/")).thenReturn(stat(1, FileType.DIRECTORY, 0755, 0, 0));
        bridge = new FuseBridge(fs, FuseBuilder.getSupported().errno(), 1000, 100, true);
        bridge.inodes().useCallers(() -> new InodeOperations.Caller(4321, 765));
    }

    private static FileStat stat(long ino, FileType type, int mode, int uid, int gid) {
        return new FileStat(ino, type, 42, 4096, 3, mode, uid, gid, ATIME, MTIME, CTIME, BTIME);
    }

    /** A {@code struct timespec} of utimensat: an explicit time, UTIME_NOW or UTIME_OMIT. */
    private record Time(Instant value, boolean now, boolean omit) implements TimeSpec {
        static Time of(Instant value) {
            return new Time(value, false, false);
        }

        @Override
        public boolean isUtimeOmit() {
            return omit;
        }

        @Override
        public boolean isUtimeNow() {
            return now;
        }

        @Override
        public void set(Instant time) {
            throw new UnsupportedOperationException("read only");
        }

        @Override
        public Instant get() {
            return value;
        }
    }

    private static final Time NOW = new Time(null, true, false);
    private static final Time OMIT = new Time(null, false, true);

    @Test
    void getattrReportsTheStoredModeOwnerLinksAndNanosecondTimesOfTheNameItself() throws Exception {
        when(fs.lstat("/link")).thenReturn(stat(9, FileType.SYMLINK, 0777, 501, 20));
        when(fs.lstat("/dir")).thenReturn(stat(10, FileType.DIRECTORY, 02750, 0, 0));
        Stat link = mock(Stat.class, RETURNS_DEEP_STUBS);
        assertThat(bridge.getattr("/link", link, null)).isZero();
        verify(link).setMode(Stat.S_IFLNK | 0777);
        verify(link).setUid(501);
        verify(link).setGid(20);
        verify(link).setNLink((short) 3);
        verify(link).setSize(42);
        verify(link.aTime()).set(ATIME);
        verify(link.mTime()).set(MTIME);
        verify(link.cTime()).set(CTIME);
        verify(fs, never()).stat("/link");

        Stat dir = mock(Stat.class, RETURNS_DEEP_STUBS);
        assertThat(bridge.getattr("/dir", dir, null)).isZero();
        verify(dir).setMode(Stat.S_IFDIR | 02750);
        verify(dir).setNLink((short) 3);
    }

    @Test
    void withoutPosixAttributesGetattrKeepsTheFixedModeOwnerAndOneTime() throws Exception {
        IomapFileSystem plain = mock(IomapFileSystem.class);
        when(plain.capabilities()).thenReturn(EnumSet.of(Capability.DIRECTORIES));
        when(plain.lstat("/d")).thenReturn(new FileStat(2, FileType.DIRECTORY, 0, 0, 2, 1_234L));
        var fixed = new FuseBridge(plain, FuseBuilder.getSupported().errno(), 1000, 100, true);
        Stat dir = mock(Stat.class, RETURNS_DEEP_STUBS);
        assertThat(fixed.getattr("/d", dir, null)).isZero();
        verify(dir).setMode(Stat.S_IFDIR | 0755);
        verify(dir).setNLink((short) 1);
        verify(dir).setUid(1000);
        verify(dir).setGid(100);
        verify(dir.aTime()).set(Instant.ofEpochMilli(1_234L));
        assertThat(IomapMount.arguments(plain, FuseMountOptions.defaults())).doesNotContain("-odefault_permissions");
        assertThat(IomapMount.arguments(fs, FuseMountOptions.defaults())).containsExactly("-ofsname=iomap:mockfs",
                "-osubtype=iomap", "-odefault_permissions");
        assertThat(IomapMount.arguments(fs, FuseMountOptions.defaults().withFuseOptions(List.of("allow_other"))))
                .containsExactly("-ofsname=iomap:mockfs", "-osubtype=iomap", "-odefault_permissions", "-oallow_other");
    }

    @Test
    void whatTheFileSystemCannotDoIsEpermOrEnosysAsOnLinux() throws Exception {
        IomapFileSystem plain = mock(IomapFileSystem.class);
        when(plain.capabilities()).thenReturn(EnumSet.of(Capability.DIRECTORIES));
        var inodes = new FuseBridge(plain, FuseBuilder.getSupported().errno(), 1000, 100, true).inodes();
        assertThat(inodes.symlink("t", "/l")).isEqualTo(-LinuxErrno.EPERM);
        assertThat(inodes.link("/f", "/g")).isEqualTo(-LinuxErrno.EPERM);
        assertThat(inodes.chmod("/f", 0600)).isEqualTo(-LinuxErrno.EPERM);
        assertThat(inodes.chown("/f", 1, 1)).isEqualTo(-LinuxErrno.EPERM);
        assertThat(inodes.getxattr("/f", "user.a", ByteBuffer.allocate(0))).isEqualTo(-LinuxErrno.ENOSYS);
        assertThat(inodes.listxattr("/f", ByteBuffer.allocate(0))).isEqualTo(-LinuxErrno.ENOSYS);
        assertThat(inodes.setxattr("/f", "user.a", ByteBuffer.allocate(1), 0)).isEqualTo(-LinuxErrno.ENOSYS);
        assertThat(inodes.removexattr("/f", "user.a")).isEqualTo(-LinuxErrno.ENOSYS);
        assertThat(inodes.utimens("/f", Time.of(Instant.EPOCH), OMIT, null)).as("explicit times, as before")
                .isEqualTo(-LinuxErrno.EOPNOTSUPP);
        verify(plain).capabilities();
        verifyNoMoreInteractions(plain);
    }

    @Test
    void mkdirCreateAndSymlinkGiveTheKernelsModeAndTheCallersIds() throws Exception {
        IomapFile file = mock(IomapFile.class);
        when(fs.create(any(), any(NewInodeAttributes.class))).thenReturn(file);
        assertThat(bridge.mkdir("/d", 0750)).isZero();
        verify(fs).mkdir("/d", new NewInodeAttributes(0750, 4321, 765));
        assertThat(bridge.create("/f", Stat.S_IFREG | 0640, new FuseBridgeTest.Info(0))).isZero();
        verify(fs).create("/f", new NewInodeAttributes(0640, 4321, 765));
        assertThat(bridge.inodes().symlink("../target", "/l")).isZero();
        verify(fs).createSymbolicLink("/l", "../target", new NewInodeAttributes(0777, 4321, 765));
        verify(fs, never()).mkdir("/d");
    }

    @Test
    void aSetGroupIdParentGivesItsGroupAndADirectoryInheritsTheBit() throws Exception {
        when(fs.lstat("/shared")).thenReturn(stat(5, FileType.DIRECTORY, 02775, 0, 50));
        when(fs.create(any(), any(NewInodeAttributes.class))).thenReturn(mock(IomapFile.class));
        assertThat(bridge.mkdir("/shared/sub", 0755)).isZero();
        verify(fs).mkdir("/shared/sub", new NewInodeAttributes(02755, 4321, 50));
        assertThat(bridge.create("/shared/f", 0644, new FuseBridgeTest.Info(0))).isZero();
        verify(fs).create("/shared/f", new NewInodeAttributes(0644, 4321, 50));
    }

    @Test
    void readlinkFillsTheBufferNulTerminatedAndCutToItsSize() throws Exception {
        when(fs.readSymbolicLink("/l")).thenReturn("abcdef");
        ByteBuffer small = ByteBuffer.allocate(4);
        assertThat(bridge.inodes().readlink("/l", small, 4)).isZero();
        assertThat(small.array()).isEqualTo("abc\0".getBytes(US_ASCII));
        ByteBuffer big = ByteBuffer.allocate(16);
        assertThat(bridge.inodes().readlink("/l", big, 16)).isZero();
        assertThat(new String(big.array(), 0, 7, US_ASCII)).isEqualTo("abcdef\0");

        when(fs.readSymbolicLink("/f")).thenThrow(new NotLinkException("/f"));
        assertThat(bridge.inodes().readlink("/f", ByteBuffer.allocate(16), 16)).isEqualTo(-LinuxErrno.EINVAL);
    }

    @Test
    void linkChmodAndChownCallTheFileSystemAndMinusOneLeavesAnId() throws Exception {
        assertThat(bridge.inodes().link("/old", "/new")).isZero();
        verify(fs).createLink("/new", "/old");
        assertThat(bridge.inodes().chmod("/f", Stat.S_IFREG | 04751)).isZero();
        verify(fs).setAttributes("/f", AttributeChange.none().withMode(04751));
        assertThat(bridge.inodes().chown("/f", 5, -1)).isZero();
        verify(fs).setAttributes("/f", AttributeChange.none().withUid(5));
        assertThat(bridge.inodes().chown("/f", -1, 6)).isZero();
        verify(fs).setAttributes("/f", AttributeChange.none().withGid(6));
        assertThat(bridge.inodes().chown("/f", -1, -1)).as("changes nothing, calls nothing").isZero();
        verify(fs).capabilities();
        verifyNoMoreInteractions(fs);
    }

    @Test
    void utimensSetsExplicitNanosecondTimesNowOrLeavesThem() throws Exception {
        Instant explicit = Instant.ofEpochSecond(1_234_567_890L, 987_654_321);
        assertThat(bridge.utimens("/f", Time.of(explicit), OMIT, null)).isZero();
        verify(fs).setAttributes("/f", AttributeChange.none().withAtime(explicit));

        Instant before = Instant.now();
        assertThat(bridge.utimens("/g", OMIT, NOW, null)).isZero();
        Instant after = Instant.now();
        var change = ArgumentCaptor.forClass(AttributeChange.class);
        verify(fs).setAttributes(org.mockito.ArgumentMatchers.eq("/g"), change.capture());
        assertThat(change.getValue().atime()).isEmpty();
        assertThat(change.getValue().mtime()).get().satisfies(t -> assertThat(t).isBetween(before, after));

        assertThat(bridge.utimens("/h", null, null, null)).as("a NULL array is both now").isZero();
        verify(fs).setAttributes(org.mockito.ArgumentMatchers.eq("/h"), change.capture());
        assertThat(change.getValue().atime()).isEqualTo(change.getValue().mtime()).isPresent();

        assertThat(bridge.utimens("/i", OMIT, OMIT, null)).isZero();
        verify(fs, never()).setAttributes(org.mockito.ArgumentMatchers.eq("/i"), any());
    }

    @Test
    void getxattrAndListxattrAnswerTheSizeToAProbeAndErangeWhenTooSmall() throws Exception {
        when(fs.getXattr("/f", "user.k")).thenReturn("value".getBytes(US_ASCII));
        when(fs.getXattr("/f", "user.none")).thenThrow(new NoSuchAttributeException("/f", "user.none"));
        assertThat(bridge.inodes().getxattr("/f", "user.k", ByteBuffer.allocate(0))).isEqualTo(5);
        assertThat(bridge.inodes().getxattr("/f", "user.k", ByteBuffer.allocate(4))).isEqualTo(-LinuxErrno.ERANGE);
        ByteBuffer value = ByteBuffer.allocate(8);
        assertThat(bridge.inodes().getxattr("/f", "user.k", value)).isEqualTo(5);
        assertThat(new String(value.array(), 0, 5, US_ASCII)).isEqualTo("value");
        assertThat(bridge.inodes().getxattr("/f", "user.none", ByteBuffer.allocate(8))).isEqualTo(-LinuxErrno.ENODATA);

        when(fs.listXattrs("/f")).thenReturn(List.of("user.a", "user.bb"));
        assertThat(bridge.inodes().listxattr("/f", ByteBuffer.allocate(0))).isEqualTo(15);
        assertThat(bridge.inodes().listxattr("/f", ByteBuffer.allocate(14))).isEqualTo(-LinuxErrno.ERANGE);
        ByteBuffer list = ByteBuffer.allocate(15);
        assertThat(bridge.inodes().listxattr("/f", list)).isEqualTo(15);
        assertThat(list.array()).isEqualTo("user.a\0user.bb\0".getBytes(US_ASCII));
    }

    @Test
    void setxattrFlagsBecomeModesAndRemovexattrOfAMissingOneIsEnodata() throws Exception {
        byte[] v = {1, 2, 3};
        assertThat(bridge.inodes().setxattr("/f", "user.a", ByteBuffer.wrap(v), 0)).isZero();
        verify(fs).setXattr("/f", "user.a", v, XattrMode.ANY);
        assertThat(bridge.inodes().setxattr("/f", "user.b", ByteBuffer.wrap(v), InodeOperations.XATTR_CREATE)).isZero();
        verify(fs).setXattr("/f", "user.b", v, XattrMode.CREATE);
        assertThat(bridge.inodes().setxattr("/f", "user.c", ByteBuffer.wrap(v), InodeOperations.XATTR_REPLACE)).isZero();
        verify(fs).setXattr("/f", "user.c", v, XattrMode.REPLACE);
        assertThat(bridge.inodes().setxattr("/f", "user.d", ByteBuffer.wrap(v), 4)).isEqualTo(-LinuxErrno.EINVAL);

        when(fs.getXattr("/f", "user.a")).thenReturn(v);
        when(fs.getXattr("/f", "user.x")).thenThrow(new NoSuchAttributeException("/f", "user.x"));
        assertThat(bridge.inodes().setxattr("/f", "user.a", ByteBuffer.wrap(v), 3)).isEqualTo(-LinuxErrno.EEXIST);
        assertThat(bridge.inodes().setxattr("/f", "user.x", ByteBuffer.wrap(v), 3)).isEqualTo(-LinuxErrno.ENODATA);
        org.mockito.Mockito.doThrow(new FileAlreadyExistsException("/f")).when(fs)
                .setXattr("/f", "user.e", v, XattrMode.CREATE);
        assertThat(bridge.inodes().setxattr("/f", "user.e", ByteBuffer.wrap(v), InodeOperations.XATTR_CREATE))
                .isEqualTo(-LinuxErrno.EEXIST);

        org.mockito.Mockito.doThrow(new NoSuchAttributeException("/f", "user.none")).when(fs)
                .removeXattr("/f", "user.none");
        assertThat(bridge.inodes().removexattr("/f", "user.none")).isEqualTo(-LinuxErrno.ENODATA);
        assertThat(bridge.inodes().removexattr("/f", "user.a")).isZero();
        verify(fs).removeXattr("/f", "user.a");
    }
}
