package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.DeviceNumber;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.api.XattrMode;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Special files ({@code mknod(2)}): FIFOs, character and block device nodes and sockets are inodes with a
 * type, attributes, names and (a device node) a device number, and no data. Each state is checked again
 * after an unmount, fsck and mount. The tests need {@link Capability#SPECIAL_FILES} (and
 * {@link Capability#POSIX_ATTRIBUTES}, {@link Capability#DIRECTORIES} where they say); without it
 * {@link #withoutTheCapabilitySpecialFilesAreNotSupported} proves the call fails.
 */
public abstract class SpecialFilesContract extends AdapterContract {
    private static final long NULL_DEVICE = DeviceNumber.of(1, 3);
    /** A device number past the kernel's 32-bit encoding: a 32-bit major and minor. */
    private static final long WIDE_DEVICE = DeviceNumber.of(0xfffff123L, 0xabcdef12L);

    private static NewInodeAttributes attributes(int mode) {
        return new NewInodeAttributes(mode, 1000, 100);
    }

    @Test
    void withoutTheCapabilitySpecialFilesAreNotSupported() {
        assumeFalse(has(Capability.SPECIAL_FILES), "SPECIAL_FILES is declared");
        assertThatThrownBy(() -> fs.createSpecialFile("/fifo", FileType.FIFO, 0, attributes(0644)))
                .isInstanceOf(NotSupportedException.class);
    }

    @Test
    void everyKindKeepsItsTypeModeOwnerAndDeviceNumberAcrossAMount() throws IOException {
        assumeCapable(Capability.SPECIAL_FILES, Capability.POSIX_ATTRIBUTES);
        fs.createSpecialFile("/fifo", FileType.FIFO, 0, attributes(0640));
        fs.createSpecialFile("/null", FileType.CHARACTER_DEVICE, NULL_DEVICE, attributes(0666));
        fs.createSpecialFile("/wide", FileType.CHARACTER_DEVICE, WIDE_DEVICE, attributes(0600));
        fs.createSpecialFile("/loop", FileType.BLOCK_DEVICE, DeviceNumber.of(7, 0), attributes(0660));
        fs.createSpecialFile("/sock", FileType.SOCKET, 0, attributes(0755));
        for (int round = 0; round < 2; round++) {
            assertSpecial("/fifo", FileType.FIFO, 0640, 0);
            assertSpecial("/null", FileType.CHARACTER_DEVICE, 0666, NULL_DEVICE);
            assertSpecial("/wide", FileType.CHARACTER_DEVICE, 0600, WIDE_DEVICE);
            assertSpecial("/loop", FileType.BLOCK_DEVICE, 0660, DeviceNumber.of(7, 0));
            assertSpecial("/sock", FileType.SOCKET, 0755, 0);
            assertThat(DeviceNumber.major(fs.lstat("/wide").rdev())).isEqualTo(0xfffff123L);
            assertThat(DeviceNumber.minor(fs.lstat("/wide").rdev())).isEqualTo(0xabcdef12L);
            remountChecked();
        }
    }

    private void assertSpecial(String path, FileType type, int mode, long rdev) throws IOException {
        FileStat stat = fs.lstat(path);
        assertThat(stat.type()).as(path).isEqualTo(type);
        assertThat(stat.mode()).as(path).isEqualTo(mode);
        assertThat(stat.posixMode()).as(path).isEqualTo(type.modeBits() | mode);
        assertThat(stat.uid()).as(path).isEqualTo(1000);
        assertThat(stat.gid()).as(path).isEqualTo(100);
        assertThat(stat.rdev()).as(path).isEqualTo(rdev);
        assertThat(stat.size()).as(path).isZero();
        assertThat(stat.linkCount()).as(path).isEqualTo(1);
        assertThat(stat.btime()).as(path).isEqualTo(stat.ctime());
    }

    @Test
    void aListingNamesTheirTypes() throws IOException {
        assumeCapable(Capability.SPECIAL_FILES, Capability.DIRECTORIES);
        fs.mkdir("/d");
        fs.createSpecialFile("/d/p", FileType.FIFO, 0, attributes(0644));
        fs.createSpecialFile("/d/c", FileType.CHARACTER_DEVICE, NULL_DEVICE, attributes(0644));
        fs.createSpecialFile("/d/b", FileType.BLOCK_DEVICE, DeviceNumber.of(8, 1), attributes(0644));
        fs.createSpecialFile("/d/s", FileType.SOCKET, 0, attributes(0644));
        for (int round = 0; round < 2; round++) {
            assertThat(fs.readdir("/d")).extracting(DirEntry::name, DirEntry::type).containsExactlyInAnyOrder(
                    org.assertj.core.groups.Tuple.tuple("p", FileType.FIFO),
                    org.assertj.core.groups.Tuple.tuple("c", FileType.CHARACTER_DEVICE),
                    org.assertj.core.groups.Tuple.tuple("b", FileType.BLOCK_DEVICE),
                    org.assertj.core.groups.Tuple.tuple("s", FileType.SOCKET));
            remountChecked();
        }
    }

    @Test
    void aSpecialFileHasNoDataToOpenAndNoUserAttributes() throws IOException {
        assumeCapable(Capability.SPECIAL_FILES);
        fs.createSpecialFile("/fifo", FileType.FIFO, 0, attributes(0644));
        assertThatThrownBy(() -> fs.open("/fifo")).isInstanceOf(FileSystemException.class)
                .hasMessageContaining("not a regular file");
        if (has(Capability.XATTRS)) {
            assertThatThrownBy(() -> fs.setXattr("/fifo", "user.x", new byte[] {1}, XattrMode.ANY))
                    .isInstanceOf(OperationNotPermittedException.class);
            fs.setXattr("/fifo", "trusted.x", new byte[] {2}, XattrMode.ANY);
            assertThat(remountChecked().getXattr("/fifo", "trusted.x")).containsExactly(2);
        }
    }

    @Test
    void anExistingNameIsRefusedAndNothingChanges() throws IOException {
        assumeCapable(Capability.SPECIAL_FILES);
        write(create("/f"), 0, new byte[] {7});
        assertThatThrownBy(() -> fs.createSpecialFile("/f", FileType.FIFO, 0, attributes(0644)))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThat(remountChecked().lstat("/f").type()).isEqualTo(FileType.REGULAR);
        assertContent(open("/f"), new byte[] {7});
    }

    @Test
    void aTypeThatIsNotSpecialOrADeviceNumberOnAFifoIsRefused() {
        assumeCapable(Capability.SPECIAL_FILES);
        assertThatThrownBy(() -> fs.createSpecialFile("/r", FileType.REGULAR, 0, attributes(0644)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> fs.createSpecialFile("/p", FileType.FIFO, NULL_DEVICE, attributes(0644)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void linksRenamesAndUnlinksTreatThemAsAnyInode() throws IOException {
        assumeCapable(Capability.SPECIAL_FILES, Capability.HARD_LINKS, Capability.DIRECTORIES, Capability.RENAME);
        fs.mkdir("/d");
        fs.createSpecialFile("/d/c", FileType.CHARACTER_DEVICE, NULL_DEVICE, attributes(0644));
        long ino = fs.lstat("/d/c").ino();
        fs.createLink("/c2", "/d/c");
        fs.rename("/d/c", "/moved");
        fs.createSpecialFile("/gone", FileType.SOCKET, 0, attributes(0644));
        fs.unlink("/gone");
        remountChecked();
        assertThat(fs.lstat("/moved").ino()).isEqualTo(ino);
        assertThat(fs.lstat("/c2").ino()).isEqualTo(ino);
        assertThat(fs.lstat("/c2").linkCount()).isEqualTo(2);
        assertThat(fs.lstat("/c2").rdev()).isEqualTo(NULL_DEVICE);
        assertThat(fs.readdir("/d")).isEmpty();
        assertThat(fs.readdir("/")).extracting(DirEntry::name).doesNotContain("gone");
        fs.unlink("/c2");
        fs.unlink("/moved");
        remountChecked();
        assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactlyInAnyOrder("d");
    }

    @Test
    void aModeAndOwnerChangeIsKept() throws IOException {
        assumeCapable(Capability.SPECIAL_FILES, Capability.POSIX_ATTRIBUTES);
        fs.createSpecialFile("/b", FileType.BLOCK_DEVICE, DeviceNumber.of(8, 0), attributes(0600));
        fs.setAttributes("/b", AttributeChange.none().withMode(0640).withUid(0).withGid(6));
        remountChecked();
        FileStat stat = fs.lstat("/b");
        assertThat(List.of(stat.mode(), stat.uid(), stat.gid())).containsExactly(0640, 0, 6);
        assertThat(stat.rdev()).isEqualTo(DeviceNumber.of(8, 0));
        assertThat(stat.type()).isEqualTo(FileType.BLOCK_DEVICE);
    }
}
