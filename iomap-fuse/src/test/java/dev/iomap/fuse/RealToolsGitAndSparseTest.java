package dev.iomap.fuse;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * git (which renames lock files, writes read-only objects and mmaps its packs) and
 * {@code cp --sparse=always} work on a real FUSE mount of an image as they do on the host's disk in
 * the same run; the repository still passes {@code git fsck --full} after unmount, fsck and remount.
 */
class RealToolsGitAndSparseTest {
    /** The sparse file: 16 MiB with three written ranges (the same shape make-tree.sh makes). */
    static final String MAKE_SPARSE = "truncate -s 16M sparse.bin && "
            + "head -c 4096 /dev/urandom | dd of=sparse.bin bs=4096 conv=notrunc status=none && "
            + "head -c 5000 /dev/urandom | dd of=sparse.bin bs=1 seek=$((5 * 1024 * 1024 + 1000)) "
            + "conv=notrunc status=none && "
            + "head -c 4096 /dev/urandom | dd of=sparse.bin bs=4096 seek=4095 conv=notrunc status=none";
    /** Blocks of 512 bytes in the whole 16 MiB. */
    static final long FULL_SECTORS = (16L << 20) / 512;

    @TempDir
    Path dir;
    Path image;
    Set<Capability> capabilities;
    MountedImage mount;
    RealToolsSteps steps;

    @BeforeEach
    void mount() throws Exception {
        MountedImage.assumeFuse();
        RealToolsImage.assumeTools(List.of("git", "python3", "cmp"));
        image = dir.resolve("disk.img");
        MountedImage.format(MountedImage.ADAPTER, image, RealToolsImage.SIZE);
        capabilities = RealToolsImage.capabilities(MountedImage.ADAPTER, image);
        Files.createDirectories(dir.resolve("host"));
        steps = new RealToolsSteps(MountedImage.ADAPTER, Files.createDirectories(dir.resolve("scratch")), Map.of());
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"));
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    /** The git script's FEATURES: an executable file, and a symbolic link where the mount has them. */
    private String gitFeatures() {
        return capabilities.contains(Capability.SYMLINKS) ? "links attrs" : "attrs";
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void gitInitAddCommitGcFsckAndCloneOnTheMount() throws Exception {
        assumeTrue(capabilities.contains(Capability.POSIX_ATTRIBUTES), () -> MountedImage.ADAPTER
                + " declares no POSIX_ATTRIBUTES, and git cannot work without chmod: every change to"
                + " .git/config chmods config.lock to the config's mode");
        String git = "FEATURES='" + gitFeatures() + "' bash '" + RealToolsSteps.script("git-steps.sh") + "' ";
        String hostIds = steps.must("git on the host", dir, git + "'" + dir.resolve("host/repo") + "'");
        Path repo = mount.mountPoint.resolve("repo");
        RealToolsSteps.Result onMount = steps.run("git init/add/commit/gc/fsck --full/clone on the mount (features: "
                + gitFeatures() + ")", dir, git + "'" + repo + "'");
        if (onMount != null && onMount.exit() == 0) {
            steps.same("git commit and tree ids, mount vs host", "host", hostIds, "mount", onMount.stdout());
        }
        try {
            mount.unmount();
            steps.check("fusermount3 -u", true, "");
        } catch (AssertionError e) {
            steps.check("fusermount3 -u", false, String.valueOf(e.getMessage()));
            steps.assertAllPassed();
        }
        var problems = MountedImage.fsck(MountedImage.ADAPTER, image).problems();
        steps.check("fsck (FilesystemAdapter.fsck) after unmount", problems.isEmpty(), "problems: " + problems);
        mount = MountedImage.mount(MountedImage.ADAPTER, image, dir.resolve("mnt"));
        String fsck = "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git fsck --full --strict --no-progress && "
                + "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git rev-parse HEAD HEAD~1 'HEAD^{tree}'";
        if (onMount != null && onMount.exit() == 0) {
            steps.same("git ids after remount", "host", hostIds, "mount",
                    steps.capture("git fsck --full after remount", dir, "cd '" + repo + "' && " + fsck));
            steps.run("git fsck --full of the clone after remount", dir,
                    "cd '" + repo.resolveSibling("repo-clone") + "' && " + fsck);
        } else {
            steps.notRun("git fsck --full of the repository and its clone after remount", "git failed before");
        }
        mount.unmount();
        steps.assertAllPassed();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    @Disabled("xfs-like keeps its speculative preallocation (up to 1 MiB past EOF) once a later write extends"
            + " the file past it, and never trims it on close: a write at 5 MiB of a new file leaves 2056"
            + " sectors allocated, and cp --sparse=always of a 16 MiB file with 16 KiB of data gets 2080"
            + " sectors where its source has 32 and ext4's copy 32. Enable when xfs-like trims it.")
    void cpSparseAlwaysKeepsTheHolesOnTheMount() throws Exception {
        Path host = dir.resolve("host");
        String copy = MAKE_SPARSE + " && cp --sparse=always sparse.bin sparse.copy && cmp sparse.bin sparse.copy && "
                + "stat -c %b sparse.bin sparse.copy";
        String hostBlocks = steps.must("cp --sparse=always on the host", host, copy);
        RealToolsSteps.Result result = steps.run("truncate, dd and cp --sparse=always, cmp on the mount",
                mount.mountPoint, copy);
        if (result != null && result.exit() == 0) {
            List<Long> blocks = result.stdout().lines().map(Long::valueOf).toList();
            long source = blocks.get(0);
            long target = blocks.get(1);
            String seen = "stat -c %b: source " + source + ", copy " + target + " (host: "
                    + hostBlocks.strip().replace('\n', ' ') + "; all 16 MiB: " + FULL_SECTORS + ")";
            steps.check("the sparse source on the mount keeps its holes", source <= FULL_SECTORS / 16, seen);
            steps.check("cp --sparse=always: the copy has no more blocks than its source", target <= source, seen);
            steps.check("cp --sparse=always: the copy keeps the holes", target <= FULL_SECTORS / 16, seen);
        }
        mount.unmount();
        steps.assertAllPassed();
    }
}
