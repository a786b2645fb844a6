package dev.iomap.testkit.snapfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.api.XattrMode;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.MountedFileSystem;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NotLinkException;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * snapfs' links, attributes and extended attributes through the SPI alone (no engine): what the kit's
 * suites cannot reach through the API, such as the metadata-slot limit on extended attributes and the
 * attributes reported without POSIX_ATTRIBUTES declared.
 */
class SnapMountLinksTest {
    private static final NewInodeAttributes OWNED = new NewInodeAttributes(0640, 5, 6);

    private static RamBlockDevice formatted(long bytes) throws IOException {
        RamBlockDevice device = new RamBlockDevice(512, bytes);
        new SnapAdapter().format(device, FormatOptions.blockSize(4096));
        return device;
    }

    @Test
    void linksCountNamesAndRenameOfTwoNamesOfOneInodeChangesNothing() throws IOException {
        RamBlockDevice device = formatted(8L << 20);
        MountedFileSystem mount = new SnapAdapter().mount(device, MountOptions.defaults());
        long root = mount.rootIno();
        long file = mount.inodeOps().create(root, "a", FileType.REGULAR, OWNED);
        mount.inodeOps().link(file, root, "b");
        assertThat(mount.inodeOps().getattr(file).linkCount()).isEqualTo(2);
        assertThat(mount.inodeOps().rename(root, "a", root, "b")).isEqualTo(-1);
        assertThat(mount.inodeOps().lookup(root, "a")).isEqualTo(file);
        assertThat(mount.inodeOps().lookup(root, "b")).isEqualTo(file);
        assertThatThrownBy(() -> mount.inodeOps().link(file, root, "a")).isInstanceOf(FileAlreadyExistsException.class);
        long dir = mount.inodeOps().create(root, "d", FileType.DIRECTORY, OWNED);
        assertThatThrownBy(() -> mount.inodeOps().link(dir, root, "e")).isInstanceOf(OperationNotPermittedException.class);
        long other = mount.inodeOps().create(root, "c", FileType.REGULAR, OWNED);
        assertThat(mount.inodeOps().rename(root, "c", root, "a")).isEqualTo(file);
        assertThat(mount.inodeOps().getattr(file).linkCount()).isEqualTo(1);
        assertThat(mount.inodeOps().lookup(root, "a")).isEqualTo(other);
        mount.superOps().unmount();
        assertThat(new SnapAdapter().fsck(device).problems()).isEmpty();
    }

    @Test
    void aSymlinkKeepsItsTargetAndIsNoFileToReadlinkOtherwise() throws IOException {
        RamBlockDevice device = formatted(8L << 20);
        MountedFileSystem mount = new SnapAdapter().mount(device, MountOptions.defaults());
        byte[] target = {'x', (byte) 0xff, '/'};
        long link = mount.inodeOps().symlink(mount.rootIno(), "l", target, OWNED);
        target[0] = 'y';
        FileStat info = mount.inodeOps().getattr(link);
        assertThat(Arrays.asList(info.type(), info.size(), info.mode(), info.uid(), info.gid()))
                .containsExactly(FileType.SYMLINK, 3L, 0777, 5, 6);
        assertThat(mount.inodeOps().readlink(link)).containsExactly('x', 0xff, '/');
        long file = mount.inodeOps().create(mount.rootIno(), "f", FileType.REGULAR, OWNED);
        assertThatThrownBy(() -> mount.inodeOps().readlink(file)).isInstanceOf(NotLinkException.class);
        mount.superOps().unmount();
        MountedFileSystem again = new SnapAdapter().mount(device, MountOptions.defaults());
        assertThat(again.inodeOps().readlink(link)).containsExactly('x', 0xff, '/');
        again.superOps().unmount();
    }

    @Test
    void setattrAndUpdateTimesChangeWhatTheySayAndCtime() throws IOException {
        MountedFileSystem mount = new SnapAdapter().mount(formatted(8L << 20), MountOptions.defaults());
        long file = mount.inodeOps().create(mount.rootIno(), "f", FileType.REGULAR, OWNED);
        FileStat created = mount.inodeOps().getattr(file);
        Instant atime = Instant.ofEpochSecond(-1, 5);
        FileStat changed = mount.inodeOps().setattr(file, AttributeChange.none().withMode(01000).withAtime(atime));
        assertThat(Arrays.asList(changed.mode(), changed.uid(), changed.gid(), changed.atime(), changed.mtime(),
                changed.btime())).containsExactly(01000, 5, 6, atime, created.mtime(), created.btime());
        assertThat(changed.ctime()).isAfterOrEqualTo(created.ctime());
        Instant now = Instant.parse("2030-01-01T00:00:00.5Z");
        mount.inodeOps().updateTimes(new TestInode(file), now);
        FileStat touched = mount.inodeOps().getattr(file);
        assertThat(Arrays.asList(touched.mtime(), touched.ctime(), touched.atime())).containsExactly(now, now, atime);
        mount.inodeOps().updateTimes(new TestInode(12345), now);
        mount.superOps().unmount();
    }

    @Test
    void xattrModesAndAValueThatNoLongerFitsASlotIsNoSpaceAndChangesNothing() throws IOException {
        // 8 MiB: metadata slots of 512 KiB, so eight 64 KiB values fit and the ninth does not.
        RamBlockDevice device = formatted(8L << 20);
        MountedFileSystem mount = new SnapAdapter().mount(device, MountOptions.defaults());
        long file = mount.inodeOps().create(mount.rootIno(), "f", FileType.REGULAR, OWNED);
        FileStat before = mount.inodeOps().getattr(file);
        mount.xattrOps().setxattr(file, "user.a", new byte[] {1}, XattrMode.CREATE);
        assertThatThrownBy(() -> mount.xattrOps().setxattr(file, "user.a", new byte[] {2}, XattrMode.CREATE))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> mount.xattrOps().setxattr(file, "user.b", new byte[] {2}, XattrMode.REPLACE))
                .isInstanceOf(NoSuchAttributeException.class);
        assertThatThrownBy(() -> mount.xattrOps().getxattr(file, "user.b")).isInstanceOf(NoSuchAttributeException.class);
        assertThatThrownBy(() -> mount.xattrOps().removexattr(file, "user.b")).isInstanceOf(NoSuchAttributeException.class);
        byte[] big = new byte[65536];
        int stored = 0;
        NoSpaceException full = null;
        for (int i = 0; i < 10 && full == null; i++) {
            try {
                mount.xattrOps().setxattr(file, "user.big" + i, big, XattrMode.ANY);
                stored++;
            } catch (NoSpaceException e) {
                full = e;
            }
        }
        assertThat(full).isNotNull();
        assertThat(stored).isEqualTo(7);
        assertThat(mount.xattrOps().listxattr(file)).hasSize(1 + stored).doesNotContain("user.big" + stored);
        assertThatThrownBy(() -> mount.xattrOps().setxattr(file, "user.a", big, XattrMode.REPLACE))
                .isInstanceOf(NoSpaceException.class);
        assertThat(mount.xattrOps().getxattr(file, "user.a")).containsExactly(1);
        assertThat(mount.inodeOps().getattr(file).ctime()).isAfterOrEqualTo(before.ctime());
        mount.superOps().unmount();
        assertThat(new SnapAdapter().fsck(device).problems()).isEmpty();
    }

    @Test
    void withoutPosixAttributesNewInodesGetTheDefaultsAndOneTime() throws IOException {
        MountedFileSystem mount = SnapAdapter.without(Capability.POSIX_ATTRIBUTES)
                .mount(formatted(8L << 20), MountOptions.defaults());
        long file = mount.inodeOps().create(mount.rootIno(), "f", FileType.REGULAR, OWNED);
        FileStat info = mount.inodeOps().getattr(file);
        assertThat(Arrays.asList(info.mode(), info.uid(), info.gid())).containsExactly(0644, 0, 0);
        assertThat(List.of(info.atime(), info.ctime(), info.btime())).containsOnly(info.mtime());
        assertThat(Instant.ofEpochMilli(info.mtime().toEpochMilli())).isEqualTo(info.mtime());
        mount.superOps().unmount();
    }

    /** The inode the SPI's {@code updateTimes} names: only its number matters to snapfs. */
    private record TestInode(long ino) implements dev.iomap.spi.IomapInode {
        @Override
        public long size() {
            return 0;
        }

        @Override
        public int blockSize() {
            return 4096;
        }

        @Override
        public void releaseDelalloc(long pos, long length, long written, dev.iomap.spi.DelallocPunch punch) {
            throw new UnsupportedOperationException("not needed by updateTimes");
        }

        @Override
        public void writeAndWait(long start, long end) {
            throw new UnsupportedOperationException("not needed by updateTimes");
        }

        @Override
        public void shrinkSizeAfterLostWrite(long size) {
            throw new UnsupportedOperationException("not needed by updateTimes");
        }
    }
}
