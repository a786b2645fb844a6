package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The INIT reply's bits, set on plain memory laid out as {@code struct fuse_out_header} and {@code fuse_init_out}. */
class DirectIoMmapTest {

    @Test
    void aSuccessfulInitReplyGetsInitExtAndDirectIoAllowMmap() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment header = arena.allocate(DirectIoMmap.HEADER_BYTES);
            MemorySegment initOut = arena.allocate(64);
            initOut.set(JAVA_INT, DirectIoMmap.FLAGS_OFFSET, 0x0000_1234);
            initOut.set(JAVA_INT, DirectIoMmap.FLAGS2_OFFSET, 0x1);

            assertThat(DirectIoMmap.patch(header, initOut)).isTrue();

            assertThat(initOut.get(JAVA_INT, DirectIoMmap.FLAGS_OFFSET)).isEqualTo(0x4000_1234);
            assertThat(initOut.get(JAVA_INT, DirectIoMmap.FLAGS2_OFFSET)).isEqualTo(0x11);
            assertThat(initOut.get(JAVA_INT, 0)).as("major untouched").isZero();
            assertThat(initOut.get(JAVA_INT, 36)).as("the field after flags2 untouched").isZero();
        }
    }

    @Test
    void anErrorReplyOrAShortOneIsLeftAsItIs() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment header = arena.allocate(DirectIoMmap.HEADER_BYTES);
            header.set(JAVA_INT, 4, -71); // -EPROTO
            MemorySegment initOut = arena.allocate(64);
            assertThat(DirectIoMmap.patch(header, initOut)).isFalse();
            assertThat(initOut.get(JAVA_INT, DirectIoMmap.FLAGS_OFFSET)).isZero();

            MemorySegment ok = arena.allocate(DirectIoMmap.HEADER_BYTES);
            MemorySegment old = arena.allocate(24); // a protocol 7.22 reply: no flags2
            assertThat(DirectIoMmap.patch(ok, old)).isFalse();
            assertThat(old.get(JAVA_INT, DirectIoMmap.FLAGS_OFFSET)).isZero();
        }
    }

    @Test
    void theBitIsFuseDirectIoAllowMmap() {
        long flags = (long) DirectIoMmap.FLAGS2_DIRECT_IO_ALLOW_MMAP << 32;
        assertThat(flags).as("FUSE_DIRECT_IO_ALLOW_MMAP, fuse_kernel.h 7.39").isEqualTo(1L << 36);
        assertThat(DirectIoMmap.FUSE_INIT_EXT).isEqualTo(1 << 30);
    }
}
