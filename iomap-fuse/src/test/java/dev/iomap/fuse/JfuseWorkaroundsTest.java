package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.IomapFileSystem;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mockito.Mockito;

/**
 * The offsets {@link FallocateBinding} writes and reads agree with jfuse's own generated layouts of
 * libfuse's structs; the mount table and command line are as libfuse and the kernel expect.
 */
class JfuseWorkaroundsTest {

    private static long jfuseOffset(String struct, String field) throws Exception {
        Class<?> layout = Class.forName("org.cryptomator.jfuse.linux.amd64.extr.fuse3." + struct);
        return (long) layout.getMethod(field + "$offset").invoke(null);
    }

    @Test
    void fallocateSlotAndFileInfoOffsetsMatchJfusesLayouts() throws Exception {
        assumeTrue(System.getProperty("os.arch").equals("amd64"), "jfuse's amd64 layouts are checked on amd64");
        assertThat(FallocateBinding.FALLOCATE_SLOT).isEqualTo(jfuseOffset("fuse_operations", "fallocate"));
        assertThat(FallocateBinding.FH_OFFSET).isEqualTo(jfuseOffset("fuse_file_info", "fh"));
        assertThat(FallocateBinding.FLAGS_OFFSET).isEqualTo(jfuseOffset("fuse_file_info", "flags"));
        assertThat(FallocateBinding.LOCK_OWNER_OFFSET).isEqualTo(jfuseOffset("fuse_file_info", "lock_owner"));
        assertThat(jfuseOffset("fuse_config", "direct_io")).as("DirectIoConfig finds it by name").isPositive();
    }

    @Test
    void mountTableFindsFuseMountsWithEscapedNames() {
        List<String> mountinfo = List.of(
                "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
                "90 22 0:50 / /tmp/a\\040b rw,nosuid,nodev,relatime shared:40 - fuse.iomap iomap:xfs-like rw,user_id=0",
                "91 22 0:51 / /tmp/plain rw,relatime shared:41 - tmpfs tmpfs rw");
        assertThat(MountTable.isFuseMounted(mountinfo, "/tmp/a b")).isTrue();
        assertThat(MountTable.isFuseMounted(mountinfo, "/tmp/plain")).as("not FUSE").isFalse();
        assertThat(MountTable.isFuseMounted(mountinfo, "/tmp/a")).isFalse();
    }

    @Test
    void commandLineNamesTheAdapterAndPassesExtraOptions() {
        IomapFileSystem fs = Mockito.mock(IomapFileSystem.class);
        Mockito.when(fs.adapterName()).thenReturn("xfs-like");
        assertThat(IomapMount.arguments(fs, FuseMountOptions.defaults().withFuseOptions(List.of("allow_other"))))
                .containsExactly("-ofsname=iomap:xfs-like", "-osubtype=iomap", "-oallow_other");
        assertThat(FuseMountOptions.defaults().directIo()).isTrue();
        assertThat(FuseMountOptions.defaults().withLibraryPath(Path.of("/x.so")).findLibrary())
                .isEqualTo(Path.of("/x.so"));
    }
}
