package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code name_to_handle_at} and {@code open_by_handle_at} through the kernel (xfstests generic/426, 467,
 * 477): a handle opens its file after the kernel dropped its inode and dentry caches, and after an unmount
 * and mount; a handle of a removed file is ESTALE; a file unlinked while open opens again through
 * {@code /proc/self/fd} (generic/467's "unlinked open file": the open has no path to take). Needs root (drop_caches, {@code CAP_DAC_READ_SEARCH})
 * and python3 (the calls through ctypes).
 */
class FuseExportTest {
    /** Saves the handle of argv[1] to argv[2]; or, with argv[1] = "open", opens the saved one and prints it. */
    private static final String HANDLES = """
            import ctypes, errno, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            class Handle(ctypes.Structure):
                _fields_ = [("size", ctypes.c_uint), ("type", ctypes.c_int), ("bytes", ctypes.c_ubyte * 128)]
            h = Handle()
            if sys.argv[1] != "open":
                h.size = 128
                mount_id = ctypes.c_int()
                if libc.name_to_handle_at(-100, sys.argv[1].encode(), ctypes.byref(h), ctypes.byref(mount_id), 0):
                    sys.exit("name_to_handle_at: " + errno.errorcode[ctypes.get_errno()])
                open(sys.argv[2], "wb").write(bytes(h))
            else:
                ctypes.memmove(ctypes.byref(h), open(sys.argv[2], "rb").read(), ctypes.sizeof(h))
                mount_fd = os.open(".", os.O_RDONLY)
                fd = libc.open_by_handle_at(mount_fd, ctypes.byref(h), os.O_RDONLY)
                if fd < 0:
                    print(errno.errorcode[ctypes.get_errno()])
                else:
                    print(os.read(fd, 100).decode())
            """;

    @TempDir
    Path dir;
    MountedImage mount;

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    private String handles(String... args) throws Exception {
        return mount.sh("python3 " + dir.resolve("handles.py") + " " + String.join(" ", args));
    }

    @ParameterizedTest
    @ValueSource(strings = {"xfs-like", "gfs2-like", "bcachefs-like"})
    void aHandleOpensItsFileAfterTheKernelForgotItAndIsStaleOnceTheFileIsGone(String adapter) throws Exception {
        MountedImage.assumeFuse();
        assumeTrue(MountedImage.onPath("python3"), "python3 is not installed");
        Files.writeString(dir.resolve("handles.py"), HANDLES);
        Path image = dir.resolve("disk.img");
        MountedImage.format(adapter, image, 32L << 20);
        mount = MountedImage.mount(adapter, image, dir.resolve("mnt"));
        mount.sh("mkdir -p a/b && printf kept > a/b/f && printf gone > a/g");
        handles("a/b/f", dir.resolve("f.handle").toString());
        handles("a/g", dir.resolve("g.handle").toString());
        mount.sh("rm a/g && sync && echo 3 > /proc/sys/vm/drop_caches");

        assertThat(handles("open", dir.resolve("f.handle").toString())).isEqualTo("kept\n");
        assertThat(handles("open", dir.resolve("g.handle").toString())).isEqualTo("ESTALE\n");
        mount.sh("echo 3 > /proc/sys/vm/drop_caches");
        assertThat(handles("open", dir.resolve("f.handle").toString())).isEqualTo("kept\n");

        assertThat(mount.sh("exec 3<a/b/f; rm a/b/f; printf more >> /proc/self/fd/3; cat /proc/self/fd/3; "
                + "echo 3 > /proc/sys/vm/drop_caches; cat /proc/self/fd/3; ls a/b | wc -l"))
                .as("an unlinked open file opens again through /proc/self/fd").isEqualTo("keptmorekeptmore0\n");
        mount.sh("printf kept > a/b/f");
        handles("a/b/f", dir.resolve("f.handle").toString());

        Path mountPoint = dir.resolve("mnt");
        mount.unmount();
        mount = MountedImage.mount(adapter, image, mountPoint);
        assertThat(handles("open", dir.resolve("f.handle").toString())).as("after a mount cycle").isEqualTo("kept\n");
    }
}
