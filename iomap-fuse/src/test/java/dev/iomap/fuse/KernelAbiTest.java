package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The reply flags set and the write flags read on libfuse's behalf, on messages built in memory. */
class KernelAbiTest {

    @Test
    void initGetsKillprivV2AndMmapOnlyInASuccessfulReply() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment header = arena.allocate(KernelAbi.OUT_HEADER_BYTES);
            MemorySegment init = arena.allocate(64);
            init.set(JAVA_INT, KernelAbi.INIT_OUT_FLAGS, 1);
            assertThat(KernelAbi.patchInit(header, init, true)).isTrue();
            assertThat(init.get(JAVA_INT, KernelAbi.INIT_OUT_FLAGS))
                    .isEqualTo(1 | KernelAbi.FUSE_INIT_EXT | KernelAbi.FUSE_HANDLE_KILLPRIV_V2);
            assertThat(init.get(JAVA_INT, KernelAbi.INIT_OUT_FLAGS2)).isEqualTo(KernelAbi.FLAGS2_DIRECT_IO_ALLOW_MMAP);

            MemorySegment other = arena.allocate(64);
            assertThat(KernelAbi.patchInit(header, other, false)).isTrue();
            assertThat(other.get(JAVA_INT, KernelAbi.INIT_OUT_FLAGS2)).isZero();
            header.set(JAVA_INT, KernelAbi.OUT_HEADER_ERROR, -71);
            assertThat(KernelAbi.patchInit(header, arena.allocate(64), true)).isFalse();
        }
    }

    @Test
    void openAndCreateRepliesGetTheOpenFlags() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment header = arena.allocate(KernelAbi.OUT_HEADER_BYTES);
            MemorySegment open = arena.allocate(KernelAbi.OPEN_OUT_BYTES);
            open.set(JAVA_INT, KernelAbi.OPEN_OUT_FLAGS, KernelAbi.FOPEN_DIRECT_IO);
            assertThat(KernelAbi.patchOpen(header, open, KernelAbi.FOPEN_PARALLEL_DIRECT_WRITES)).isTrue();
            assertThat(open.get(JAVA_INT, KernelAbi.OPEN_OUT_FLAGS))
                    .isEqualTo(KernelAbi.FOPEN_DIRECT_IO | KernelAbi.FOPEN_PARALLEL_DIRECT_WRITES);
            MemorySegment create = arena.allocate(KernelAbi.ENTRY_OUT_BYTES + KernelAbi.OPEN_OUT_BYTES);
            assertThat(KernelAbi.patchOpen(header, create, KernelAbi.FOPEN_PARALLEL_DIRECT_WRITES)).isTrue();
            assertThat(create.get(JAVA_INT, KernelAbi.ENTRY_OUT_BYTES + KernelAbi.OPEN_OUT_FLAGS))
                    .isEqualTo(KernelAbi.FOPEN_PARALLEL_DIRECT_WRITES);
            assertThat(KernelAbi.patchOpen(header, arena.allocate(24), 64)).as("not an open reply").isFalse();
        }
    }

    @Test
    void writeFlagsAreTrustedOnlyWhenTheRequestMatches() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment in = arena.allocate(KernelAbi.WRITE_IN_BYTES);
            in.set(JAVA_LONG, KernelAbi.WRITE_IN_FH, 7);
            in.set(JAVA_LONG, KernelAbi.WRITE_IN_OFFSET, 4096);
            in.set(JAVA_INT, KernelAbi.WRITE_IN_SIZE, 512);
            in.set(JAVA_INT, KernelAbi.WRITE_IN_WRITE_FLAGS, KernelAbi.FUSE_WRITE_KILL_SUIDGID);
            assertThat(KernelAbi.killsPrivileges(in, 7, 4096, 512)).isTrue();
            assertThat(KernelAbi.killsPrivileges(in, 8, 4096, 512)).isFalse();
            assertThat(KernelAbi.killsPrivileges(in, 7, 0, 512)).isFalse();
            assertThat(KernelAbi.killsPrivileges(in, 7, 4096, 511)).isFalse();
            in.set(JAVA_INT, KernelAbi.WRITE_IN_WRITE_FLAGS, 1);
            assertThat(KernelAbi.killsPrivileges(in, 7, 4096, 512)).isFalse();
        }
    }
}
