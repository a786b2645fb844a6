package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.IomapFileSystem;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.cryptomator.jfuse.api.FuseBuilder;
import org.cryptomator.jfuse.api.FuseOperations.Operation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.mockito.Mockito;

/**
 * The slots {@link RawPathBinding} binds agree with jfuse's own generated layouts of libfuse's
 * {@code struct fuse_operations} on both Linux platforms, and cover every operation the bridge
 * takes a path in; the mount table and command line are as libfuse and the kernel expect.
 */
class JfuseWorkaroundsTest {
    /** Operations whose path the bridge never looks at: jfuse's binding (and its decoding) is fine there. */
    private static final Set<Operation> PATH_NOT_USED = EnumSet.of(Operation.INIT, Operation.DESTROY, Operation.READ,
            Operation.WRITE, Operation.FLUSH, Operation.RELEASE, Operation.FSYNC);

    private static long jfuseOffset(String platform, String struct, String field) throws Exception {
        Class<?> layout = Class.forName("org.cryptomator.jfuse.linux." + platform + ".extr.fuse3." + struct);
        return (long) layout.getMethod(field + "$offset").invoke(null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"amd64", "aarch64"})
    void slotOffsetsMatchJfusesLayouts(String platform) throws Exception {
        for (RawPathBinding.Slot slot : RawPathBinding.SLOTS) {
            assertThat(slot.offset()).as(slot.name()).isEqualTo(jfuseOffset(platform, "fuse_operations", slot.name()));
        }
        assertThat(jfuseOffset(platform, "fuse_config", "direct_io")).as("DirectIoConfig finds it by name")
                .isPositive();
        assertThat(jfuseOffset(platform, "fuse_config", "use_ino")).as("DirectIoConfig.useIno finds it by name")
                .isPositive();
    }

    @Test
    void everyOperationTakingAPathIsBoundRaw() {
        var bridge = new FuseBridge(Mockito.mock(IomapFileSystem.class), FuseBuilder.getSupported().errno(), 0, 0,
                true);
        Set<Operation> bound = RawPathBinding.SLOTS.stream().map(RawPathBinding.Slot::operation)
                .filter(Objects::nonNull).collect(Collectors.toCollection(() -> EnumSet.noneOf(Operation.class)));
        Set<Operation> pathTaking = EnumSet.copyOf(bridge.supportedOperations());
        pathTaking.removeAll(PATH_NOT_USED);
        assertThat(bound).isEqualTo(pathTaking);
        assertThat(RawPathBinding.SLOTS).filteredOn(slot -> slot.operation() == null)
                .extracting(RawPathBinding.Slot::name).containsExactly("readlink", "symlink", "link", "chmod", "chown",
                        "setxattr", "getxattr", "listxattr", "removexattr", "ioctl", "fallocate", "copy_file_range", "lseek");
        assertThat(RawPathBinding.SLOTS).extracting(RawPathBinding.Slot::method).contains("copyFileRange")
                .doesNotContain("copy_file_range");
    }

    @Test
    void jfusesStructViewsAreFoundForThisPlatform() {
        assumeTrue(System.getProperty("os.name").equals("Linux"), "jfuse's Linux structs are checked on Linux");
        String platform = FuseBuilder.getSupported().getClass().getPackageName();
        assertThat(JfuseStructs.find(platform)).isPresent();
        assertThat(JfuseStructs.find("org.example.nothing")).isEmpty();
    }

    @Test
    void statBlocksWritesStBlocksInto512ByteUnits() {
        assumeTrue(System.getProperty("os.name").equals("Linux"), "jfuse's Linux structs are checked on Linux");
        String platform = FuseBuilder.getSupported().getClass().getPackageName();
        JfuseStructs structs = JfuseStructs.find(platform).orElseThrow();
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            var memory = arena.allocate(structs.statBytes());
            org.cryptomator.jfuse.api.Stat stat = structs.stat(memory);

            assertThat(StatBlocks.set(stat, 4097)).isTrue();

            // st_blocks is at byte 64 of struct stat on both x86_64 and aarch64 Linux
            assertThat(memory.get(java.lang.foreign.ValueLayout.JAVA_LONG, 64)).isEqualTo(9);
            assertThat(StatBlocks.set(stat, 0)).isTrue();
            assertThat(memory.get(java.lang.foreign.ValueLayout.JAVA_LONG, 64)).isZero();

            // st_ino is at byte 8 (after the 8-byte st_dev) on both
            assertThat(StatBlocks.setIno(stat, 0x1_2345_6789L)).isTrue();
            assertThat(memory.get(java.lang.foreign.ValueLayout.JAVA_LONG, 8)).isEqualTo(0x1_2345_6789L);
        }
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
