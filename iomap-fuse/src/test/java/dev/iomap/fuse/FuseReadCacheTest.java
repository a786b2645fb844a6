package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Coherence of opens that read from the kernel's page cache ({@link OpenCaching}) on a real mount, in
 * each of the three ways to mount: the default (direct I/O, read-only opens cached), the kernel's page
 * cache for everything ({@code withDirectIo(false)}), and direct I/O throughout
 * ({@code withReadCache(false)}). A read-only descriptor that has read a file keeps reading what was
 * written since through other descriptors (pwrite, ftruncate, a shared mapping), through a second name of
 * the file (hard link), and after that name is gone again.
 */
class FuseReadCacheTest {
    /** Prints, one per line, what the cached reader sees after each change. */
    private static final String SCRIPT = "python3 -c '\n"
            + "import mmap, os\n"
            + "with open(\"a\", \"wb\") as f:\n"
            + "    f.write(b\"A\" * 8192)\n"
            + "r = os.open(\"a\", os.O_RDONLY)\n"
            + "assert os.pread(r, 4, 0) == b\"AAAA\"\n"
            + "w = os.open(\"a\", os.O_WRONLY)\n"
            + "os.pwrite(w, b\"BBBB\", 0)\n"
            + "print(os.pread(r, 4, 0).decode())\n"
            + "os.pwrite(w, b\"CCCC\", 4096)\n"
            + "print(os.pread(r, 4, 4096).decode())\n"
            + "os.ftruncate(w, 4098)\n"
            + "print(len(os.pread(r, 8192, 0)))\n"
            + "m = os.open(\"a\", os.O_RDWR)\n"
            + "mm = mmap.mmap(m, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)\n"
            + "mm[0:4] = b\"DDDD\"\n"
            + "mm.flush()\n"
            + "mm.close()\n"
            + "os.close(m)\n"
            + "print(os.pread(r, 4, 0).decode())\n"
            + "os.link(\"a\", \"b\")\n"
            + "wb = os.open(\"b\", os.O_WRONLY)\n"
            + "os.pwrite(wb, b\"EEEE\", 0)\n"
            + "os.close(wb)\n"
            + "r2 = os.open(\"a\", os.O_RDONLY)\n"
            + "print(os.pread(r2, 4, 0).decode())\n"
            + "os.close(r2)\n"
            + "os.unlink(\"b\")\n"
            + "r3 = os.open(\"a\", os.O_RDONLY)\n"
            + "print(os.pread(r3, 4, 0).decode())\n"
            + "os.close(r3)\n"
            + "os.close(r)\n"
            + "os.close(w)\n"
            + "'";

    @TempDir
    Path dir;
    MountedImage mount;

    @BeforeEach
    void format() throws Exception {
        MountedImage.assumeFuse();
        assumeTrue(FuseMmapTest.kernelAtLeast(6, 6), "a cached reader sees direct writes from Linux 6.6 on (the"
                + " kernel drops the pages a direct write covers); this kernel is " + System.getProperty("os.version"));
        MountedImage.format(MountedImage.ADAPTER, dir.resolve("disk.img"), 32L << 20);
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"default", "kernel-cache", "direct-only"})
    void aReadOnlyDescriptorSeesEveryChangeMadeThroughOthers(String mode) throws Exception {
        FuseMountOptions options = switch (mode) {
            case "kernel-cache" -> FuseMountOptions.defaults().withDirectIo(false);
            case "direct-only" -> FuseMountOptions.defaults().withReadCache(false);
            default -> FuseMountOptions.defaults();
        };
        mount = MountedImage.mount(MountedImage.ADAPTER, dir.resolve("disk.img"), dir.resolve("mnt"), options);
        assertThat(mount.sh(SCRIPT)).isEqualTo("BBBB\nCCCC\n4098\nDDDD\nEEEE\nEEEE\n");
        assertThat(mount.sh("head -c 4 a && stat -c ' %s %h' a")).isEqualTo("EEEE 4098 1\n");
        mount.unmount();
    }
}
