package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Reading the mount table: whether a FUSE mount is read-only now ({@link MountTable#isReadOnly}), which FUSE mounts there are. */
class MountTableTest {
    private static final String ROOT = "22 1 8:1 / / ro,relatime shared:1 - ext4 /dev/vda1 rw";
    private static final String WRITABLE = "95 22 0:39 / /work/mnt\\040a rw,nosuid,nodev shared:50 - fuse.iomap"
            + " iomap:xfs-like rw,user_id=0,group_id=0";
    private static final String READ_ONLY = "96 22 0:40 / /work/ro ro,nosuid,nodev shared:51 - fuseblk.iomap"
            + " /dev/loop3 ro,user_id=0,group_id=0";
    private static final String REMOUNTED_ON_TOP = "97 95 0:41 / /work/mnt\\040a ro,relatime - fuse.iomap"
            + " iomap:xfs-like rw,user_id=0,group_id=0";

    @Test
    void theMountsOwnOptionsSayWhetherItIsReadOnly() {
        List<String> table = List.of(ROOT, WRITABLE, READ_ONLY);
        assertThat(MountTable.isReadOnly(table, "/work/mnt a")).isFalse();
        assertThat(MountTable.isReadOnly(table, "/work/ro")).isTrue();
        assertThat(MountTable.isReadOnly(table, "/")).as("read-only, but not FUSE").isFalse();
        assertThat(MountTable.isReadOnly(table, "/work/none")).as("nothing mounted there").isFalse();
    }

    @Test
    void theMountOnTopDecides() {
        assertThat(MountTable.isReadOnly(List.of(ROOT, WRITABLE, REMOUNTED_ON_TOP), "/work/mnt a")).isTrue();
        assertThat(MountTable.isReadOnly(List.of(ROOT, REMOUNTED_ON_TOP, WRITABLE), "/work/mnt a")).isFalse();
    }

    @Test
    void shortOrForeignLinesAreSkipped() {
        assertThat(MountTable.isReadOnly(List.of("garbage", "", "1 2 3 4 /work/ro"), "/work/ro")).isFalse();
    }

    @Test
    void fuseMountsAreListedWithTheirTypeAndSourceEscapesUndone() {
        assertThat(MountTable.fuseMounts(List.of(ROOT, WRITABLE, READ_ONLY, "garbage"))).containsExactly(
                new MountTable.FuseMount(java.nio.file.Path.of("/work/mnt a"), "fuse.iomap", "iomap:xfs-like"),
                new MountTable.FuseMount(java.nio.file.Path.of("/work/ro"), "fuseblk.iomap", "/dev/loop3"));
    }

    @Test
    void octalEscapesAreUndone() {
        assertThat(MountTable.unescape("a\\040b\\011c\\134d\\012")).isEqualTo("a b\tc\\d\n");
        assertThat(MountTable.unescape("no\\escape\\08")).isEqualTo("no\\escape\\08");
    }
}
