package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import dev.iomap.api.Xattrs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * POSIX ACLs on a real mount (issue 38): {@code setfacl} and {@code getfacl} round-trip, the kernel
 * enforces an ACL for another user, chmod rewrites the mask, a directory's default ACL is inherited
 * without the umask, and elsewhere the umask applies. Needs root (another user reads), {@code setpriv}
 * and the {@code acl} tools.
 */
class FuseAclTest {
    private static final String NOBODY = "setpriv --reuid=65534 --regid=65534 --clear-groups -- ";

    @TempDir
    Path dir;
    MountedImage mount;

    @BeforeEach
    void mount() throws Exception {
        MountedImage.assumeFuse();
        assumeTrue(MountedImage.run(Path.of("/"), List.of("id", "-u")).stdout().strip().equals("0"),
                "acting as another user needs root");
        assumeTrue(MountedImage.onPath("setpriv"), "setpriv (util-linux) is not installed");
        assumeTrue(MountedImage.onPath("setfacl"), "setfacl (acl) is not installed");
        Path image = dir.resolve("disk.img");
        MountedImage.format(MountedImage.ADAPTER, image, 32L << 20);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"),
                FuseMountOptions.defaults().withFuseOptions(List.of("allow_other")));
        assumeTrue(mount.capabilities().containsAll(List.of(Capability.POSIX_ATTRIBUTES, Capability.XATTRS)),
                MountedImage.ADAPTER + " keeps no modes or no extended attributes");
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    /** Before: chacl and setfacl failed with "Operation not supported" (xfstests' _require_acls). */
    @Test
    void anAclGrantsAnotherUserAndChmodRewritesItsMask() throws Exception {
        String out = mount.sh("umask 022; echo secret > f; chmod 600 f; " + NOBODY + "cat f 2>/dev/null || echo denied; "
                + "setfacl -m u:65534:r f; stat -c %a f; getfacl -n -E --omit-header f; " + NOBODY + "cat f; "
                + "chmod 600 f; getfacl -n -E --omit-header f | grep mask; " + NOBODY + "cat f 2>/dev/null || echo denied; "
                + "chmod 640 f; " + NOBODY + "cat f; chacl -l f");
        assertThat(out).isEqualTo("denied\n640\nuser::rw-\nuser:65534:r--\ngroup::---\nmask::r--\nother::---\n\n"
                + "secret\nmask::---\ndenied\nsecret\nf [u::rw-,u:nobody:r--,g::---,m::r--,o::---]\n");
        mount.unmount();
        try (var reopened = MountedImage.reopen(mount.adapter, mount.image)) {
            assertThat(reopened.fs().lstat("/f").mode()).isEqualTo(0640);
            assertThat(PosixAcl.parse(reopened.fs().getXattr("/f", Xattrs.POSIX_ACL_ACCESS)).entries()).hasSize(5);
        }
    }

    @Test
    void aDefaultAclIsInheritedWithoutTheUmaskAndElsewhereTheUmaskApplies() throws Exception {
        String out = mount.sh("mkdir d; setfacl -d -m u:65534:rwx d; (umask 077; touch d/new; mkdir d/sub); "
                + "stat -c %a d/new d/sub; getfacl -n -E --omit-header d/new; getfacl -n -E --omit-header -d d/sub; "
                + NOBODY + "sh -c 'echo x >> d/new'; cat d/new; (umask 027; touch plain; mkdir pd); stat -c %a plain pd");
        assertThat(out).isEqualTo("664\n775\n"
                + "user::rw-\nuser:65534:rwx\ngroup::r-x\nmask::rw-\nother::r--\n\n"
                + "user::rwx\nuser:65534:rwx\ngroup::r-x\nmask::rwx\nother::r-x\n\n"
                + "x\n640\n750\n");
        mount.unmount();
    }
}
