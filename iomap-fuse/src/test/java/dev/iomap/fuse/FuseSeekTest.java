package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * lseek(2) {@code SEEK_DATA}/{@code SEEK_HOLE} on a real mount find the holes of a sparse file
 * (issue 13), so {@code cp} keeps them in both directions. Without the lseek binding the kernel's
 * default reports the whole file as data, the only hole at EOF.
 */
class FuseSeekTest {
    private static final int KIB = 1024;
    /**
     * Data at [0, 64 KiB) and [1 MiB, 1 MiB + 64 KiB), holes between and up to the 2 MiB size. Sized
     * first: writes that extend a file get xfs-like's speculative preallocation past EOF, which is
     * delayed allocation and so data (as in XFS) once a truncate takes the size over it, a hole
     * reported late, as lseek(2) allows, but not the exact offsets asserted here.
     */
    private static final String MAKE_SPARSE = "truncate -s 2M %1$s"
            + " && dd if=/dev/urandom of=%1$s bs=64k count=1 conv=notrunc status=none"
            + " && dd if=/dev/urandom of=%1$s bs=64k seek=16 count=1 conv=notrunc status=none";
    private static final long SIZE = 2L << 20;
    /** {@code lseek} of each "whence:offset" argument on one descriptor: the offset found, or the errno's name. */
    private static final String LSEEK = "python3 -c 'import errno, os, sys\n"
            + "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
            + "for arg in sys.argv[2:]:\n"
            + "    whence, offset = arg.split(\":\")\n"
            + "    try:\n"
            + "        print(os.lseek(fd, int(offset), os.SEEK_DATA if whence == \"data\" else os.SEEK_HOLE))\n"
            + "    except OSError as e:\n"
            + "        print(errno.errorcode[e.errno])\n"
            + "' ";

    @TempDir
    Path dir;
    MountedImage mount;

    @BeforeEach
    void mount() throws Exception {
        MountedImage.assumeFuse();
        Path image = dir.resolve("disk.img");
        MountedImage.format(MountedImage.ADAPTER, image, 32L << 20);
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"));
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    private String seeks(String file) throws Exception {
        return mount.sh(LSEEK + file + " hole:0 data:0 data:65536 hole:1048576 hole:1179648 data:1114112"
                + " data:2097152 hole:2097152 data:-1 hole:-1");
    }

    private static final String EXPECTED = "65536\n0\n1048576\n1114112\n1179648\nENXIO\nENXIO\nENXIO\nENXIO\nENXIO\n";

    @Test
    void seekDataAndSeekHoleFindTheHolesOfAFileWrittenThroughTheMount() throws Exception {
        mount.sh(MAKE_SPARSE.formatted("sparse.bin"));
        assertThat(seeks("sparse.bin")).as("in the page cache").isEqualTo(EXPECTED);
        mount.sh("sync sparse.bin");
        assertThat(seeks("sparse.bin")).as("written back").isEqualTo(EXPECTED);
        mount.unmount();
    }

    @Test
    void cpKeepsTheHolesFromTheMountToTheHostAndBack() throws Exception {
        mount.sh(MAKE_SPARSE.formatted("sparse.bin") + " && sync sparse.bin");
        mount.sh("cp --sparse=always sparse.bin ../always.bin && cmp sparse.bin ../always.bin");
        // The default (auto) makes a hole only where SEEK_HOLE finds one: zeroes read as data stay data.
        mount.sh("cp sparse.bin ../auto.bin && cmp sparse.bin ../auto.bin");
        assertThat(hostAllocated("always.bin")).isLessThanOrEqualTo(256 * KIB);
        assertThat(hostAllocated("auto.bin")).as("cp --sparse=auto").isLessThanOrEqualTo(256 * KIB);

        mount.sh(MAKE_SPARSE.formatted("../host.bin"));
        mount.sh("cp --sparse=always ../host.bin copy.bin && cmp ../host.bin copy.bin && sync copy.bin");
        assertThat(mount.stat("/copy.bin").allocatedBytes()).as("allocated on the mount")
                .isBetween(128L * KIB, 256L * KIB);
        assertThat(Long.parseLong(mount.sh("stat -c %b copy.bin").strip()) * 512)
                .as("st_blocks on the mount says what the file system allocated")
                .isEqualTo(mount.stat("/copy.bin").allocatedBytes());
        assertThat(seeks("copy.bin")).isEqualTo(EXPECTED);
        mount.unmount();
    }

    /** @return the bytes the host allocates to {@code name} in the test directory ({@code stat -c %b}) */
    private long hostAllocated(String name) throws Exception {
        long blocks = Long.parseLong(mount.sh("stat -c %b ../" + name).strip());
        assertThat(Long.parseLong(mount.sh("stat -c %s ../" + name).strip())).isEqualTo(SIZE);
        return blocks * 512;
    }
}
