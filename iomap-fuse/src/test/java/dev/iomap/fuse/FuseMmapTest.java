package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code mmap(MAP_SHARED, PROT_WRITE)} of a file on a default (direct-I/O) mount: the kernel allows it
 * because the INIT reply asks for {@code FUSE_DIRECT_IO_ALLOW_MMAP} ({@link DirectIoMmap}); without
 * that it is ENODEV. The stores reach the file system and are in the image after unmount.
 */
class FuseMmapTest {
    /** Creates an 8 KiB file, stores through a shared writable mapping, msyncs; prints "ok" or the errno's name. */
    private static final String MMAP_WRITE = "python3 -c 'import errno, mmap, os, sys\n"
            + "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
            + "os.ftruncate(fd, 8192)\n"
            + "try:\n"
            + "    m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)\n"
            + "except OSError as e:\n"
            + "    print(errno.errorcode[e.errno]); sys.exit(0)\n"
            + "m[0:5] = b\"hello\"\n"
            + "m[4096:4101] = b\"world\"\n"
            + "m.flush()\n"
            + "m.close()\n"
            + "os.close(fd)\n"
            + "print(\"ok\")\n"
            + "' ";

    @TempDir
    Path dir;
    Path image;
    MountedImage mount;

    @BeforeEach
    void mount() throws Exception {
        MountedImage.assumeFuse();
        assumeTrue(kernelAtLeast(6, 6), "FUSE_DIRECT_IO_ALLOW_MMAP needs Linux 6.6 or later; this kernel is "
                + System.getProperty("os.version") + " (a shared mapping of a direct-I/O file is ENODEV there)");
        image = dir.resolve("disk.img");
        MountedImage.format(MountedImage.ADAPTER, image, 32L << 20);
    }

    /** @return whether the running kernel's release is at least {@code major.minor} */
    static boolean kernelAtLeast(int major, int minor) {
        Matcher release = Pattern.compile("^(\\d+)\\.(\\d+)").matcher(System.getProperty("os.version"));
        if (!release.find()) {
            return false;
        }
        int kernelMajor = Integer.parseInt(release.group(1));
        return kernelMajor > major || (kernelMajor == major && Integer.parseInt(release.group(2)) >= minor);
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    @Test
    void sharedWritableMmapOnADirectIoMountReachesTheImage() throws Exception {
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"));
        assertThat(mount.sh(MMAP_WRITE + "m.bin")).as("mmap(MAP_SHARED) on a direct-I/O mount").isEqualTo("ok\n");
        assertThat(mount.sh("head -c 5 m.bin && tail -c +4097 m.bin | head -c 5 && stat -c %s m.bin"))
                .isEqualTo("helloworld8192\n");
        mount.unmount();

        byte[] expected = new byte[8192];
        System.arraycopy("hello".getBytes(StandardCharsets.US_ASCII), 0, expected, 0, 5);
        System.arraycopy("world".getBytes(StandardCharsets.US_ASCII), 0, expected, 4096, 5);
        try (var device = FileBlockDevice.open(image, 4096, false);
                IomapFileSystem fs = IomapFileSystems.mount(MountedImage.ADAPTER, device, MountOptions.defaults());
                var file = fs.open("/m.bin")) {
            ByteBuffer read = ByteBuffer.allocate(8192);
            while (read.hasRemaining() && file.read(read.position(), read) > 0) {
                // until full or EOF
            }
            assertThat(file.size()).isEqualTo(8192);
            assertThat(read.array()).isEqualTo(expected);
        }
    }

    @Test
    void theMountSaysItAskedForSharedMappingsOnlyWithDirectIo() throws Exception {
        for (boolean directIo : new boolean[] {true, false}) {
            Path mountPoint = Files.createDirectories(dir.resolve("direct-" + directIo));
            var device = FileBlockDevice.open(image, 4096, false);
            IomapFileSystem fs;
            try {
                fs = IomapFileSystems.mount(MountedImage.ADAPTER, device, MountOptions.defaults());
            } catch (Exception e) {
                device.close();
                throw e;
            }
            IomapMount direct;
            try {
                direct = IomapMount.mount(fs, device, mountPoint, FuseMountOptions.defaults().withDirectIo(directIo));
            } catch (Exception e) {
                fs.close();
                device.close();
                throw e;
            }
            try (direct) {
                assertThat(direct.bridge().cache().directIo()).isEqualTo(directIo);
                assertThat(direct.sharedMmapAllowed()).as("direct I/O " + directIo).isEqualTo(directIo);
                assertThat(MountedImage.run(mountPoint, List.of("bash", "-c", MMAP_WRITE + "m" + directIo))
                        .stdout()).as("the kernel page cache maps it either way").isEqualTo("ok\n");
            }
        }
    }

    /**
     * Stores through a shared mapping of a file opened with the flags given (names of os.O_*), whose size
     * (5000) does not end on a block; msync; prints "ok" or the errno's name.
     */
    private static String mmapWriteThrough(String flags) {
        return "python3 -c 'import errno, mmap, os, sys\n"
                + "fd = os.open(sys.argv[1], os.O_RDWR | " + flags + ")\n"
                + "m = mmap.mmap(fd, 5000, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)\n"
                + "m[4090:4100] = b\"0123456789\"\n"
                + "m[4995:5000] = b\"abcde\"\n"
                + "try:\n"
                + "    m.flush()\n"
                + "except OSError as e:\n"
                + "    print(errno.errorcode[e.errno]); sys.exit(0)\n"
                + "m.close()\n"
                + "os.close(fd)\n"
                + "print(\"ok\")\n"
                + "' ";
    }

    /**
     * The kernel writes the mapping's pages back through whichever writable handle of the file it finds,
     * with {@code FUSE_WRITE_CACHE}: through an {@code O_DIRECT} handle the write of the last page is not
     * block-aligned (it ends at EOF), and the mount refused it EINVAL, so msync failed (xfstests generic/263,
     * fsx -Z with mapped writes); through an {@code O_APPEND} handle it belongs at its offset, not at the end.
     */
    @ParameterizedTest
    @ValueSource(strings = {"os.O_DIRECT", "os.O_APPEND"})
    void aMappingWrittenBackThroughADirectOrAppendHandleLandsAtItsOffset(String flags) throws Exception {
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"));
        mount.sh("head -c 5000 /dev/zero | tr '\\0' x > m.bin");

        assertThat(mount.sh(mmapWriteThrough(flags) + "m.bin")).as("msync").isEqualTo("ok\n");

        assertThat(mount.sh("stat -c %s m.bin && tail -c +4091 m.bin | head -c 10 && tail -c 6 m.bin"))
                .isEqualTo("5000\n0123456789xabcde");
    }
}
