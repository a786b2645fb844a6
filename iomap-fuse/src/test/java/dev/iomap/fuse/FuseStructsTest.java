package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.StructLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java layouts of {@link FuseStructs} and the offsets of {@link KernelAbi} against the installed
 * headers: {@code src/test/resources/layouts/fuse_layouts.c} is compiled with gcc against fuse3's and
 * linux/fuse.h's headers and prints every size and offset, which must equal the Java ones. Skipped, with
 * the reason, where gcc or libfuse3-dev is missing (CI installs both); it checks the architecture it runs
 * on (amd64 here: {@link FuseStructs#STAT_AARCH64} is glibc's generic layout, unchecked on this machine).
 */
class FuseStructsTest {
    static Map<String, Long> c;

    @BeforeAll
    static void compileAndRun(@TempDir Path dir) throws Exception {
        assumeTrue(MountedImage.onPath("gcc"), "layout test skipped: gcc is not installed");
        assumeTrue(Files.exists(Path.of("/usr/include/fuse3/fuse_lowlevel.h")),
                "layout test skipped: libfuse3-dev (fuse3's headers) is not installed");
        Path source = dir.resolve("fuse_layouts.c");
        try (InputStream in = FuseStructsTest.class.getResourceAsStream("/layouts/fuse_layouts.c")) {
            Files.write(source, in.readAllBytes());
        }
        Path binary = dir.resolve("fuse_layouts");
        run(dir, List.of("gcc", "-Wall", "-Werror", "-I/usr/include/fuse3", "-o", binary.toString(), source.toString()));
        c = new HashMap<>();
        for (String line : run(dir, List.of(binary.toString())).split("\n")) {
            int space = line.lastIndexOf(' ');
            c.put(line.substring(0, space), Long.parseLong(line.substring(space + 1)));
        }
    }

    private static String run(Path dir, List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("%s: %s", command, output).isZero();
        return output;
    }

    private static void assertLayout(String struct, StructLayout layout, String... fields) {
        assertThat(layout.byteSize()).as("sizeof " + struct).isEqualTo(c.get("sizeof " + struct));
        for (String field : fields) {
            assertThat(FuseStructs.offset(layout, field)).as(struct + "." + field).isEqualTo(c.get(struct + "." + field));
        }
    }

    @Test
    void lowlevelOpsHasEachSlotWhereTheHeaderHasIt() {
        assertLayout("fuse_lowlevel_ops", FuseStructs.LOWLEVEL_OPS, FuseStructs.LOWLEVEL_SLOTS);
    }

    @Test
    void libfuseStructs() {
        assertLayout("fuse_entry_param", FuseStructs.ENTRY_PARAM, "ino", "generation", "attr", "attr_timeout",
                "entry_timeout");
        assertLayout("fuse_file_info", FuseStructs.FILE_INFO, "flags", "fh", "lock_owner", "poll_events");
        assertLayout("fuse_conn_info", FuseStructs.CONN_INFO, "proto_major", "proto_minor", "max_write", "max_read",
                "max_readahead", "capable", "want", "max_background", "congestion_threshold", "time_gran");
        assertLayout("fuse_ctx", FuseStructs.CTX, "uid", "gid", "pid", "umask");
        assertLayout("fuse_forget_data", FuseStructs.FORGET_DATA, "ino", "nlookup");
        assertLayout("fuse_args", FuseStructs.ARGS, "argc", "argv", "allocated");
        assertLayout("fuse_loop_config_v1", FuseStructs.LOOP_CONFIG_V1, "clone_fd", "max_idle_threads");
        assertLayout("fuse_custom_io", FuseStructs.CUSTOM_IO, "writev", "read", "splice_receive", "splice_send");
    }

    /** Times beyond what an Instant holds are clamped to its ends, not refused (generic/634, 635). */
    @Test
    void aTimeBeyondTheRangeOfAnInstantIsClampedToItsEnd() {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.MemorySegment stat = arena.allocate(FuseStructs.STAT);
            long mtime = FuseStructs.offset(FuseStructs.STAT, "st_mtim");
            stat.set(java.lang.foreign.ValueLayout.JAVA_LONG, mtime, 67767976233316799L);   // Dec 31 23:59:59 UTC 2147483647
            stat.set(java.lang.foreign.ValueLayout.JAVA_LONG, mtime + 8, 0L);
            assertThat(FuseStructs.time(stat, mtime)).isEqualTo(java.time.Instant.ofEpochSecond(
                    java.time.Instant.MAX.getEpochSecond()));
            stat.set(java.lang.foreign.ValueLayout.JAVA_LONG, mtime, Long.MIN_VALUE);
            assertThat(FuseStructs.time(stat, mtime)).isEqualTo(java.time.Instant.MIN);
            stat.set(java.lang.foreign.ValueLayout.JAVA_LONG, mtime, 1_700_000_000L);
            stat.set(java.lang.foreign.ValueLayout.JAVA_LONG, mtime + 8, 123L);
            assertThat(FuseStructs.time(stat, mtime)).isEqualTo(java.time.Instant.ofEpochSecond(1_700_000_000L, 123));
        }
    }

    @Test
    void fileInfoBitFields() {
        assertThat(FuseStructs.FI_BITS).isEqualTo(4);
        assertThat(c.get("fuse_file_info.direct_io_bit")).isEqualTo(FuseStructs.FI_DIRECT_IO);
        assertThat(c.get("fuse_file_info.keep_cache_bit")).isEqualTo(FuseStructs.FI_KEEP_CACHE);
        assertThat(c.get("fuse_file_info.cache_readdir_bit")).isEqualTo(FuseStructs.FI_CACHE_READDIR);
        assertThat(c.get("fuse_file_info.noflush_bit")).isEqualTo(FuseStructs.FI_NOFLUSH);
    }

    @Test
    void glibcStructsOfThisArchitecture() {
        assertLayout("stat", FuseStructs.STAT, "st_dev", "st_ino", "st_nlink", "st_mode", "st_uid", "st_gid", "st_rdev",
                "st_size", "st_blksize", "st_blocks", "st_atim", "st_mtim", "st_ctim");
        assertLayout("statvfs", FuseStructs.STATVFS, "f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail",
                "f_files", "f_ffree", "f_favail", "f_fsid", "f_flag", "f_namemax");
        assertLayout("timespec", FuseStructs.TIMESPEC, "tv_sec", "tv_nsec");
    }

    @Test
    void kernelAbi() {
        assertThat(KernelAbi.OUT_HEADER_BYTES).isEqualTo(c.get("sizeof fuse_out_header"));
        assertThat(KernelAbi.OUT_HEADER_ERROR).isEqualTo(c.get("fuse_out_header.error"));
        assertThat(KernelAbi.INIT_OUT_FLAGS).isEqualTo(c.get("fuse_init_out.flags"));
        assertThat(KernelAbi.INIT_OUT_FLAGS2).isEqualTo(c.get("fuse_init_out.flags2"));
        assertThat(KernelAbi.OPEN_OUT_BYTES).isEqualTo(c.get("sizeof fuse_open_out"));
        assertThat(KernelAbi.OPEN_OUT_FLAGS).isEqualTo(c.get("fuse_open_out.open_flags"));
        assertThat(KernelAbi.ENTRY_OUT_BYTES).isEqualTo(c.get("sizeof fuse_entry_out"));
        assertThat(KernelAbi.WRITE_IN_BYTES).isEqualTo(c.get("sizeof fuse_write_in"));
        assertThat(KernelAbi.WRITE_IN_FH).isEqualTo(c.get("fuse_write_in.fh"));
        assertThat(KernelAbi.WRITE_IN_OFFSET).isEqualTo(c.get("fuse_write_in.offset"));
        assertThat(KernelAbi.WRITE_IN_SIZE).isEqualTo(c.get("fuse_write_in.size"));
        assertThat(KernelAbi.WRITE_IN_WRITE_FLAGS).isEqualTo(c.get("fuse_write_in.write_flags"));
        assertThat((long) KernelAbi.FUSE_HANDLE_KILLPRIV_V2).isEqualTo(c.get("FUSE_HANDLE_KILLPRIV_V2"));
        assertThat((long) KernelAbi.FUSE_INIT_EXT).isEqualTo(c.get("FUSE_INIT_EXT"));
        assertThat((long) KernelAbi.FOPEN_PARALLEL_DIRECT_WRITES).isEqualTo(c.get("FOPEN_PARALLEL_DIRECT_WRITES"));
        assertThat((long) KernelAbi.FUSE_WRITE_KILL_SUIDGID).isEqualTo(c.get("FUSE_WRITE_KILL_SUIDGID"));
        assertThat((long) SetAttributes.SET_KILL_SUIDGID).isEqualTo(c.get("FATTR_KILL_SUIDGID"))
                .isEqualTo(c.get("FUSE_SET_ATTR_KILL_SUID"));
    }

    @Test
    void onlyLinuxAmd64AndAarch64AreDescribed() {
        FuseStructs.check("amd64");
        FuseStructs.check("aarch64");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> FuseStructs.check("riscv64"))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("riscv64");
        assertThat(FuseStructs.STAT_AARCH64.byteSize()).as("glibc's generic struct stat").isEqualTo(128);
        assertThat(FuseStructs.offset(FuseStructs.STAT_AARCH64, "st_size")).isEqualTo(48);
        assertThat(FuseStructs.offset(FuseStructs.STAT_AARCH64, "st_atim")).isEqualTo(72);
    }
}
