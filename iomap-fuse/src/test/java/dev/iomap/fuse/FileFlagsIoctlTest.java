package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.iomap.api.Capability;
import dev.iomap.api.FileFlag;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NotSupportedException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentMatchers;
import org.mockito.Mockito;

/**
 * The inode flags' ioctls over a mocked file system: the bits each command reads and writes, the API
 * call it makes, and the errno of what it refuses. (The same on a real mount with lsattr and chattr:
 * {@link FuseFileFlagsTest}.)
 */
class FileFlagsIoctlTest {
    IomapFileSystem fs;
    InodeOperations inodes;

    @BeforeEach
    void setUp() {
        fs = mock(IomapFileSystem.class);
        when(fs.capabilities()).thenReturn(EnumSet.of(Capability.DIRECTORIES, Capability.JOURNALED_DATA));
        when(fs.adapterName()).thenReturn("mockfs");
        inodes = new InodeOperations(fs, new InodeOperations.Caller(1000, 100), 4096);
    }

    @FunctionalInterface
    interface Call {
        void run() throws Exception;
    }

    /** @return 0, or the negated errno of what {@code call} threw ({@link ErrnoMapping}) */
    static int call(Call call) {
        try {
            call.run();
            return 0;
        } catch (Exception e) {
            return -ErrnoMapping.errno(e);
        }
    }

    private static ByteBuffer word(int value) {
        return ByteBuffer.allocate(InodeOperations.FLAGS_BYTES).order(ByteOrder.nativeOrder()).putInt(0, value);
    }

    @Test
    void getflagsWritesTheFlagsBits() throws Exception {
        when(fs.getFileFlags("/f")).thenReturn(Set.of(FileFlag.JOURNAL_DATA));
        ByteBuffer data = word(0x7777);

        assertThat(call(() -> inodes.ioctl("/f", InodeOperations.FS_IOC_GETFLAGS, data))).isZero();

        assertThat(data.order(ByteOrder.nativeOrder()).getInt(0)).isEqualTo(0x4000);
    }

    @Test
    void setflagsSetsExactlyTheFlagsGiven() throws Exception {
        assertThat(call(() -> inodes.ioctl("/f", InodeOperations.FS_IOC_SETFLAGS, word(0x4000)))).isZero();
        assertThat(call(() -> inodes.ioctl("/d", InodeOperations.FS_IOC_SETFLAGS, word(0)))).isZero();

        verify(fs).setFileFlags("/f", EnumSet.of(FileFlag.JOURNAL_DATA));
        verify(fs).setFileFlags("/d", EnumSet.noneOf(FileFlag.class));
    }

    @Test
    void aBitThatIsNoFileFlagIsRefusedWithoutCallingTheFileSystem() throws Exception {
        assertThat(call(() -> inodes.ioctl("/f", InodeOperations.FS_IOC_SETFLAGS, word(0x4000 | 0x1)))).isEqualTo(-95);

        verify(fs, never()).setFileFlags(ArgumentMatchers.anyString(), ArgumentMatchers.anySet());
    }

    @Test
    void aFlagTheFileSystemRefusesIsEopnotsupp() throws Exception {
        Mockito.doThrow(new NotSupportedException("journaled data is not supported")).when(fs)
                .setFileFlags("/f", EnumSet.of(FileFlag.JOURNAL_DATA));

        assertThat(call(() -> inodes.ioctl("/f", InodeOperations.FS_IOC_SETFLAGS, word(0x4000)))).isEqualTo(-95);
    }

    @Test
    void getAndSetflagsCarryEveryFlagByItsLinuxBit() throws Exception {
        when(fs.getFileFlags("/f")).thenReturn(EnumSet.of(FileFlag.SYNC, FileFlag.IMMUTABLE, FileFlag.APPEND,
                FileFlag.NO_DUMP, FileFlag.NO_ATIME, FileFlag.DAX));
        ByteBuffer data = word(0);

        assertThat(call(() -> inodes.ioctl("/f", InodeOperations.FS_IOC_GETFLAGS, data))).isZero();
        assertThat(data.order(ByteOrder.nativeOrder()).getInt(0)).isEqualTo(0x8 | 0x10 | 0x20 | 0x40 | 0x80 | 0x0200_0000);

        assertThat(call(() -> inodes.ioctl("/g", InodeOperations.FS_IOC_SETFLAGS, word(0x10 | 0x20)))).isZero();
        verify(fs).setFileFlags("/g", EnumSet.of(FileFlag.IMMUTABLE, FileFlag.APPEND));
    }

    @Test
    void fsgetxattrAnswersTheXflagsAndZerosElsewhere() throws Exception {
        when(fs.getFileFlags("/f")).thenReturn(EnumSet.of(FileFlag.IMMUTABLE, FileFlag.APPEND, FileFlag.DAX,
                FileFlag.JOURNAL_DATA));
        ByteBuffer fsxattr = ByteBuffer.allocate(InodeOperations.FSXATTR_BYTES);
        fsxattr.put(0, (byte) 0x5a).put(27, (byte) 0x5a);

        assertThat(call(() -> inodes.ioctl("/f", InodeOperations.FS_IOC_FSGETXATTR, fsxattr))).isZero();

        ByteBuffer read = fsxattr.duplicate().order(ByteOrder.nativeOrder());
        assertThat(read.getInt(0)).as("FS_XFLAG_IMMUTABLE | APPEND | DAX").isEqualTo(0x8 | 0x10 | 0x8000);
        assertThat(java.util.Arrays.copyOfRange(fsxattr.array(), 4, 28)).containsOnly(0);
    }

    @Test
    void fssetxattrSetsTheXflagsAndKeepsFlagsWithoutOne() throws Exception {
        when(fs.getFileFlags("/f")).thenReturn(EnumSet.of(FileFlag.JOURNAL_DATA, FileFlag.NO_DUMP));
        ByteBuffer fsxattr = ByteBuffer.allocate(InodeOperations.FSXATTR_BYTES).order(ByteOrder.nativeOrder());
        fsxattr.putInt(0, 0x8000 | 0x40);

        assertThat(call(() -> inodes.ioctl("/f", InodeOperations.FS_IOC_FSSETXATTR, fsxattr))).isZero();

        verify(fs).setFileFlags("/f", EnumSet.of(FileFlag.JOURNAL_DATA, FileFlag.DAX, FileFlag.NO_ATIME));
    }

    @Test
    void fssetxattrRefusesAnUnknownXflagAndAnExtentSize() throws Exception {
        when(fs.getFileFlags("/f")).thenReturn(Set.of());
        ByteBuffer unknown = ByteBuffer.allocate(InodeOperations.FSXATTR_BYTES).order(ByteOrder.nativeOrder());
        unknown.putInt(0, 0x1);
        ByteBuffer extsize = ByteBuffer.allocate(InodeOperations.FSXATTR_BYTES).order(ByteOrder.nativeOrder());
        extsize.putInt(4, 65536);

        assertThat(call(() -> inodes.ioctl("/f", InodeOperations.FS_IOC_FSSETXATTR, unknown))).isEqualTo(-95);
        assertThat(call(() -> inodes.ioctl("/f", InodeOperations.FS_IOC_FSSETXATTR, extsize))).isEqualTo(-22);
        verify(fs, never()).setFileFlags(ArgumentMatchers.anyString(), ArgumentMatchers.anySet());
    }

    @Test
    void otherCommandsAreEnotty() throws Exception {
        assertThat(call(() -> inodes.ioctl("/f", 0x80087601, word(0)))).isEqualTo(-25);
        assertThat(InodeOperations.ioctlBytes(InodeOperations.FS_IOC_GETFLAGS)).isEqualTo(4);
        assertThat(InodeOperations.ioctlBytes(InodeOperations.FS_IOC_SETFLAGS)).isEqualTo(4);
        assertThat(InodeOperations.ioctlBytes(InodeOperations.FS_IOC_FSGETXATTR)).isEqualTo(28);
        assertThat(InodeOperations.ioctlBytes(InodeOperations.FS_IOC_FSSETXATTR)).isEqualTo(28);
        assertThat(InodeOperations.ioctlReads(InodeOperations.FS_IOC_FSSETXATTR)).isTrue();
        assertThat(InodeOperations.ioctlBytes(0x80087601)).isZero();
    }

    @Test
    void aBufferTooShortIsEinval() throws Exception {
        assertThat(call(() -> inodes.ioctl("/f", InodeOperations.FS_IOC_GETFLAGS, ByteBuffer.allocate(0)))).isEqualTo(-22);
    }
}
