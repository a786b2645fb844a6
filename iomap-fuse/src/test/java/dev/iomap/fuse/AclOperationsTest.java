package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.Xattrs;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * POSIX ACLs through the bridge (no kernel) once the kernel granted {@code FUSE_CAP_POSIX_ACL}: the
 * mode follows an access ACL, chmod rewrites it, new nodes inherit a directory's default ACL and the
 * umask applies where there is none. Over snapfs on a RAM device.
 */
class AclOperationsTest {
    static final long ROOT = Nodes.ROOT;
    static final int O_RDWR = 2;
    /** A caller with umask 077. */
    static final InodeOperations.Caller USER = new InodeOperations.Caller(4321, 765, 077);
    /** {@code user::rw-,user:65534:r--,group::---,mask::r--,other::---}. */
    static final byte[] NOBODY_READS = HexFormat.of().parseHex("02000000" + "01000600ffffffff" + "02000400feff0000"
            + "04000000ffffffff" + "10000400ffffffff" + "20000000ffffffff");
    /** {@code user::rwx,user:65534:rwx,group::r-x,mask::rwx,other::r-x}. */
    static final byte[] NOBODY_DEFAULT = HexFormat.of().parseHex("02000000" + "01000700ffffffff" + "02000700feff0000"
            + "04000500ffffffff" + "10000700ffffffff" + "20000500ffffffff");

    RamBlockDevice device;
    IomapFileSystem fs;
    FuseBridge bridge;

    @BeforeEach
    void mount() throws IOException {
        device = new RamBlockDevice(512, 4L << 20);
        IomapFileSystems.format(SnapAdapter.NAME, device, FormatOptions.blockSize(4096));
        fs = IomapFileSystems.mount(SnapAdapter.NAME, device, MountOptions.defaults());
        bridge = new FuseBridge(fs, new InodeOperations.Caller(1000, 100), CacheMode.of(FuseMountOptions.defaults(), true));
        assertThat(bridge.supportsPosixAcls()).isTrue();
        bridge.posixAcls(true);
    }

    @AfterEach
    void unmount() throws IOException {
        bridge.releaseAll();
        fs.close();
        device.close();
    }

    private long file(long parent, String name, int mode, InodeOperations.Caller caller) throws IOException {
        FuseBridge.Created created = bridge.create(parent, name, mode, O_RDWR, caller);
        bridge.release(created.opened().fh());
        return created.entry().nodeid();
    }

    private static SetAttributes chmod(int mode) {
        return new SetAttributes(mode, null, null, null, null, null, false);
    }

    @Test
    void anAccessAclSetsTheModeAndOneTheModeSaysInFullIsKeptAsTheModeAlone() throws Exception {
        long f = file(ROOT, "f", 0600, new InodeOperations.Caller(0, 0));
        bridge.setxattr(f, Xattrs.POSIX_ACL_ACCESS, NOBODY_READS, 0);
        assertThat(fs.lstat("/f").mode()).isEqualTo(0640);
        assertThat(bridge.getxattr(f, Xattrs.POSIX_ACL_ACCESS)).isEqualTo(NOBODY_READS);

        bridge.setxattr(f, Xattrs.POSIX_ACL_ACCESS, PosixAcl.ofMode(0751).encode(), 0);
        assertThat(fs.lstat("/f").mode()).isEqualTo(0751);
        assertThat(fs.listXattrs("/f")).isEmpty();
    }

    @Test
    void chmodRewritesTheMaskOfTheAccessAcl() throws Exception {
        long f = file(ROOT, "f", 0600, new InodeOperations.Caller(0, 0));
        bridge.setxattr(f, Xattrs.POSIX_ACL_ACCESS, NOBODY_READS, 0);
        bridge.setattr(f, chmod(0705), 0);
        assertThat(fs.lstat("/f").mode()).isEqualTo(0705);
        assertThat(PosixAcl.parse(bridge.getxattr(f, Xattrs.POSIX_ACL_ACCESS)).entries()).containsExactly(
                new PosixAcl.Entry(PosixAcl.USER_OBJ, 7, -1), new PosixAcl.Entry(PosixAcl.USER, 4, 65534),
                new PosixAcl.Entry(PosixAcl.GROUP_OBJ, 0, -1), new PosixAcl.Entry(PosixAcl.MASK, 0, -1),
                new PosixAcl.Entry(PosixAcl.OTHER, 5, -1));
    }

    @Test
    void newNodesInheritTheDefaultAclWithoutTheUmaskAndElsewhereTheUmaskApplies() throws Exception {
        long d = bridge.mkdir(ROOT, "d", 0755, new InodeOperations.Caller(0, 0)).nodeid();
        bridge.setxattr(d, Xattrs.POSIX_ACL_DEFAULT, NOBODY_DEFAULT, 0);

        file(d, "f", 0666, USER);
        assertThat(fs.lstat("/d/f").mode()).isEqualTo(0664);
        assertThat(HexFormat.of().formatHex(fs.getXattr("/d/f", Xattrs.POSIX_ACL_ACCESS))).isEqualTo("02000000"
                + "01000600ffffffff" + "02000700feff0000" + "04000500ffffffff" + "10000600ffffffff" + "20000400ffffffff");
        assertThat(fs.listXattrs("/d/f")).containsExactly(Xattrs.POSIX_ACL_ACCESS);

        bridge.mkdir(d, "sub", 0777, USER);
        assertThat(fs.lstat("/d/sub").mode()).isEqualTo(0775);
        assertThat(fs.getXattr("/d/sub", Xattrs.POSIX_ACL_ACCESS)).isEqualTo(NOBODY_DEFAULT);
        assertThat(fs.getXattr("/d/sub", Xattrs.POSIX_ACL_DEFAULT)).isEqualTo(NOBODY_DEFAULT);
        bridge.mknod(d, "n", FuseBridge.S_IFREG | 0640, 0, USER);
        assertThat(fs.lstat("/d/n").mode()).isEqualTo(0640);

        file(ROOT, "plain", 0666, USER);
        bridge.mkdir(ROOT, "pd", 0777, USER);
        assertThat(fs.lstat("/plain").mode()).isEqualTo(0600);
        assertThat(fs.lstat("/pd").mode()).isEqualTo(0700);
        assertThat(fs.listXattrs("/plain")).isEmpty();
    }

    @Test
    void malformedAclsAreInvalidAndADefaultAclOnAFileIsRefused() throws Exception {
        long f = file(ROOT, "f", 0644, new InodeOperations.Caller(0, 0));
        for (byte[] bad : List.of(new byte[] {2, 0, 0}, HexFormat.of().parseHex("02000000" + "0100060000000000"))) {
            assertThat(FuseBridgeTest.errno(() -> bridge.setxattr(f, Xattrs.POSIX_ACL_ACCESS, bad, 0)))
                    .isEqualTo(-LinuxErrno.EINVAL);
        }
        assertThat(FuseBridgeTest.errno(() -> bridge.setxattr(f, Xattrs.POSIX_ACL_DEFAULT, NOBODY_DEFAULT, 0)))
                .isEqualTo(-LinuxErrno.EACCES);
        assertThat(fs.lstat("/f").mode()).isEqualTo(0644);
        assertThat(fs.listXattrs("/f")).isEmpty();
    }

    @Test
    void anAccessAclSetByACallerOutsideTheFilesGroupClearsSetGroupId() throws Exception {
        long f = file(ROOT, "f", 02750, new InodeOperations.Caller(0, 0));
        bridge.setxattr(f, Xattrs.POSIX_ACL_ACCESS, PosixAcl.ofMode(0750).encode(), 0, USER);
        assertThat(fs.lstat("/f").mode()).isEqualTo(0750);
        bridge.setattr(f, chmod(02750), 0);
        bridge.setxattr(f, Xattrs.POSIX_ACL_ACCESS, PosixAcl.ofMode(0750).encode(), 0,
                new InodeOperations.Caller(4321, fs.lstat("/f").gid()));
        assertThat(fs.lstat("/f").mode()).isEqualTo(02750);
    }
}
