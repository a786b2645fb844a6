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
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * git (which renames lock files, writes read-only objects and mmaps its packs) and
 * {@code cp --sparse=always} work on a real FUSE mount of an image of each of
 * {@link RealToolsImage#adapters()} as they do on the host's disk in
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

    /** The steps of git-steps.sh, in order (ids apart). */
    static final List<String> GIT_STEPS = List.of("make", "gc", "fsck", "clone");
    /** What each step does, for the step names. */
    static final Map<String, String> GIT_STEP_NAMES = Map.of("make", "init, add, commit (twice)",
            "gc", "gc (packs every object)", "fsck", "fsck --full --strict, status clean",
            "clone", "clone (hard links to the objects), fsck --full of the clone");

    @TempDir
    Path dir;
    Path image;
    Set<Capability> capabilities;
    MountedImage mount;
    RealToolsSteps steps;

    /** Formats a new image with {@code adapter} and mounts it; every test starts with this. */
    private void mount(String adapter) throws Exception {
        MountedImage.assumeFuse();
        RealToolsImage.assumeTools(List.of("cmp"));
        image = dir.resolve("disk.img");
        MountedImage.format(adapter, image, RealToolsImage.SIZE);
        capabilities = RealToolsImage.capabilities(adapter, image);
        Files.createDirectories(dir.resolve("host"));
        steps = new RealToolsSteps(adapter, Files.createDirectories(dir.resolve("scratch")), Map.of());
        mount = MountedImage.mount(adapter, image, dir.resolve("mnt"));
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    /** @return the command that runs one step of git-steps.sh on {@code repo} */
    private String git(String step, Path repo) {
        return "FEATURES='" + gitFeatures() + "' bash '" + RealToolsSteps.script("git-steps.sh") + "' " + step
                + " '" + repo + "'";
    }

    /** The git script's FEATURES: an executable file, and a symbolic link where the mount has them. */
    private String gitFeatures() {
        return capabilities.contains(Capability.SYMLINKS) ? "links attrs" : "attrs";
    }

    @ParameterizedTest
    @MethodSource("dev.iomap.fuse.RealToolsImage#adapters")
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void gitInitAddCommitGcFsckAndCloneOnTheMount(String adapter) throws Exception {
        RealToolsImage.assumeTools(List.of("git"));
        mount(adapter);
        assumeTrue(capabilities.contains(Capability.POSIX_ATTRIBUTES), () -> adapter
                + " declares no POSIX_ATTRIBUTES, and git cannot work without chmod: every change to"
                + " .git/config chmods config.lock to the config's mode");
        Path hostRepo = dir.resolve("host/repo");
        for (String step : GIT_STEPS) {
            steps.must("git " + step + " on the host", dir, git(step, hostRepo));
        }
        String hostIds = steps.must("git ids on the host", dir, git("ids", hostRepo));
        Path repo = mount.mountPoint.resolve("repo");
        boolean made = false;
        for (String step : GIT_STEPS) {
            RealToolsSteps.Result result = steps.run("git " + GIT_STEP_NAMES.get(step) + " on the mount", dir,
                    git(step, repo));
            made |= step.equals("make") && result != null && result.exit() == 0;
            if (!made) {
                steps.notRun("the other git steps", "git init, add and commit failed");
                break;
            }
        }
        if (made) {
            steps.same("git commit and tree ids, mount vs host", "host", hostIds, "mount",
                    steps.capture("git rev-parse on the mount", dir, git("ids", repo)));
        }
        try {
            mount.unmount();
            steps.check("fusermount3 -u", true, "");
        } catch (AssertionError e) {
            steps.check("fusermount3 -u", false, String.valueOf(e.getMessage()));
            steps.assertAllPassed();
        }
        var problems = MountedImage.fsck(adapter, image).problems();
        steps.check("fsck (FileSystemAdapter.fsck) after unmount", problems.isEmpty(), "problems: " + problems);
        mount = MountedImage.mount(adapter, image, dir.resolve("mnt"));
        if (made) {
            steps.run("git fsck --full after remount", dir, git("fsck", repo));
            steps.same("git ids after remount", "host", hostIds, "mount",
                    steps.capture("git rev-parse after remount", dir, git("ids", repo)));
        } else {
            steps.notRun("git fsck --full after remount", "git init, add and commit failed");
        }
        mount.unmount();
        steps.assertAllPassed();
    }

    @ParameterizedTest
    @MethodSource("dev.iomap.fuse.RealToolsImage#adapters")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void cpSparseAlwaysKeepsTheHolesOnTheMount(String adapter) throws Exception {
        mount(adapter);
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
