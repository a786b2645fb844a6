package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * GNU tar, cp and rsync copy a source tree (files of many sizes, a sparse file, nested directories,
 * symbolic and hard links, odd modes, other owners, nanosecond times, user xattrs; built by
 * {@code realtools/make-tree.sh}) onto a real FUSE mount of an image of each of
 * {@link RealToolsImage#adapters()} and onto the host's disk in the
 * same run, and the two copies agree by {@code diff -r}, by a {@code find -printf} listing of type,
 * mode, link count, size, mtime, link target and owner, and by their xattrs; they still do after
 * unmount, fsck and remount. The host-only test checks that the comparison itself works (host copies
 * agree, and a one-nanosecond or one-xattr change is seen).
 */
class RealToolsCopyTest {
    /** What the full tree needs of the mounted file system. */
    static final Set<Capability> FULL_TREE = EnumSet.of(Capability.SYMLINKS, Capability.HARD_LINKS,
            Capability.POSIX_ATTRIBUTES, Capability.XATTRS);
    /** The copies: name, then the command that copies {@code $SRC} (and {@code $TAR}) to {@code $DEST}. */
    static final Map<String, String> FULL_COPIES = copies(
            "tar", "mkdir \"$DEST\" && tar --xattrs -C \"$DEST\" -xpf \"$TAR\"",
            "cp", "cp -a \"$SRC\" \"$DEST\"",
            "rsync", "rsync -aHAX \"$SRC\"/ \"$DEST\"/");
    /** Copies that keep no attributes: what works on a file system without links, modes and times. */
    static final Map<String, String> CONTENT_COPIES = copies(
            "tar", "mkdir \"$DEST\" && tar -C \"$DEST\" -xmf \"$TAR\" --no-same-owner --no-same-permissions",
            "cp", "cp -r \"$SRC\" \"$DEST\"",
            "rsync", "rsync -r \"$SRC\"/ \"$DEST\"/");

    /** Fails, showing them, unless the three names of make-tree.sh's hard-linked file share st_ino. */
    static final String SAME_INODE = "names='files/hard1 files/hard2 deep/a/hard3'; "
            + "test \"$(stat -c %i $names | sort -u | wc -l)\" = 1 || { stat -c '%n ino %i links %h' $names; exit 1; }";

    /**
     * Links a file twice and removes a name, printing every name's link count right after each change:
     * a kernel filesystem says 3 3 3, then 2 2 (no name may show a count cached from before the change).
     */
    static final String LINK_COUNTS = "mkdir counts && cd counts && printf x > a && ln a b && ln a c && "
            + "stat -c '%n %h' a b c && rm b && stat -c '%n %h' a c";

    @TempDir
    Path dir;
    MountedImage mount;

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    private static Map<String, String> copies(String... nameThenCommand) {
        Map<String, String> copies = new LinkedHashMap<>();
        for (int i = 0; i < nameThenCommand.length; i += 2) {
            copies.put(nameThenCommand[i], nameThenCommand[i + 1]);
        }
        return copies;
    }

    private RealToolsSteps steps(String run) throws Exception {
        Path scratch = Files.createDirectories(dir.resolve("scratch"));
        return new RealToolsSteps(run, scratch, Map.of("SRC", dir.resolve("src").toString(),
                "TAR", dir.resolve("tree.tar").toString()));
    }

    /** Builds the source tree in dir/src and its tar archive in dir/tree.tar. */
    private void source(RealToolsSteps steps, String features, boolean full) throws Exception {
        steps.must("building the source tree", dir, "FEATURES='" + features + "' bash '"
                + RealToolsSteps.script("make-tree.sh") + "' \"$SRC\"");
        steps.must("tar -c of the source tree", dir, full
                ? "tar --xattrs --xattrs-include='*' -C \"$SRC\" -cpf \"$TAR\" ."
                : "tar -C \"$SRC\" -cf \"$TAR\" .");
    }

    /** Copies the source into {@code root}/name by each of {@code copies}. */
    private static void copy(RealToolsSteps steps, Map<String, String> copies, String where, Path root)
            throws Exception {
        for (var copy : copies.entrySet()) {
            steps.run(copy.getKey() + " host→" + where, root.getParent(),
                    "DEST='" + root.resolve(copy.getKey()) + "'; " + copy.getValue());
        }
    }

    /** @return the last two names of {@code tree} ("mnt/tar"), for step names */
    private static String shortName(Path tree) {
        return tree.getParent().getFileName() + "/" + tree.getFileName();
    }

    /** The find listing of {@code tree}, or null if find failed there (a failed step). */
    private static String listing(RealToolsSteps steps, Path tree, boolean full) throws Exception {
        return steps.capture("find -printf in " + shortName(tree), tree.getParent(), "bash '"
                + RealToolsSteps.script("listing.sh") + "' '" + tree + "'" + (full ? "" : " content"));
    }

    /** The xattrs of everything in {@code tree}, or null if reading one failed (a failed step). */
    private static String xattrs(RealToolsSteps steps, Path tree) throws Exception {
        return steps.capture("listxattr/getxattr in " + shortName(tree), tree.getParent(), "python3 '"
                + RealToolsSteps.script("xattrs.py") + "' '" + tree + "'");
    }

    /** diff -r, listing and (if full) xattrs of {@code actual} against {@code expected}, as steps. */
    private static void compare(RealToolsSteps steps, String what, Path expected, Path actual, boolean full)
            throws Exception {
        steps.run(what + ": diff -r", expected.getParent(), true,
                "diff -r --no-dereference '" + expected + "' '" + actual + "'");
        steps.same(what + ": find listing", expected.toString(), listing(steps, expected, full), actual.toString(),
                listing(steps, actual, full));
        if (full) {
            steps.same(what + ": xattrs", expected.toString(), xattrs(steps, expected), actual.toString(),
                    xattrs(steps, actual));
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void hostCopiesAgreeAndTheComparisonSeesEveryChange() throws Exception {
        RealToolsImage.assumeTools(List.of("tar", "rsync", "setfattr", "python3", "diff", "find"));
        RealToolsImage.assumeRoot();
        RealToolsSteps steps = steps("host to host (the harness)");
        source(steps, "links attrs xattrs", true);
        Path host = Files.createDirectories(dir.resolve("host"));
        copy(steps, FULL_COPIES, "host", host);
        steps.run("rsync host→host (second dir)", dir, "rsync -aHAX '" + host.resolve("rsync") + "'/ '"
                + dir.resolve("host2") + "'/");
        Path src = dir.resolve("src");
        for (String copy : FULL_COPIES.keySet()) {
            compare(steps, copy + " (host)", src, host.resolve(copy), true);
            steps.run(copy + " (host): the three hard links have one inode number", host.resolve(copy), SAME_INODE);
        }
        compare(steps, "rsync back (host)", src, dir.resolve("host2"), true);
        steps.assertAllPassed();

        // The comparison sees a nanosecond, an xattr value, a mode, an owner and a byte.
        Path copy = host.resolve("cp");
        String listing = listing(steps, copy, true);
        String xattrs = xattrs(steps, copy);
        steps.must("changing the copy", copy, "python3 -c 'import os, sys; s = os.stat(sys.argv[1]); "
                + "os.utime(sys.argv[1], ns=(s.st_atime_ns, s.st_mtime_ns + 1))' files/one && "
                + "setfattr -n user.color -v bluE files/one");
        assertThat(listing(steps, copy, true)).isNotEqualTo(listing);
        assertThat(xattrs(steps, copy)).isNotEqualTo(xattrs);
        steps.must("restoring the copy", copy, "touch -h -r \"$SRC\"/files/one files/one && "
                + "setfattr -n user.color -v blue files/one");
        assertThat(listing(steps, copy, true)).isEqualTo(listing);
        assertThat(xattrs(steps, copy)).isEqualTo(xattrs);
        for (String change : List.of("chmod 0640 files/one", "chown -h 1:1 files/rel-link",
                "printf y > files/one", "rm files/dangling-link")) {
            RealToolsSteps probe = steps("probe: " + change);
            steps.must(change, copy, "rm -rf ../probe && cp -a . ../probe && cd ../probe && " + change);
            compare(probe, "after " + change, copy, host.resolve("probe"), true);
            assertThat(probe.failures()).as("the comparison sees '%s'", change).isNotEmpty();
        }
    }

    @ParameterizedTest
    @MethodSource("dev.iomap.fuse.RealToolsImage#adapters")
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void fullTreeByTarCpAndRsyncOnTheMountEqualsTheHostCopies(String adapter) throws Exception {
        MountedImage.assumeFuse();
        RealToolsImage.assumeTools(List.of("tar", "rsync", "setfattr", "python3", "diff", "find"));
        RealToolsImage.assumeRoot();
        Path image = dir.resolve("disk.img");
        MountedImage.format(adapter, image, RealToolsImage.SIZE);
        Set<Capability> missing = RealToolsImage.missing(RealToolsImage.capabilities(adapter, image),
                FULL_TREE);
        assumeTrue(missing.isEmpty(), () -> adapter + " declares no " + missing
                + ": the full tree's links, modes, owners, times and xattrs cannot be copied onto it");
        RealToolsSteps steps = steps(adapter + " full tree");
        source(steps, "links attrs xattrs", true);
        Path host = Files.createDirectories(dir.resolve("host"));
        copy(steps, FULL_COPIES, "host", host);
        mount = MountedImage.mount(adapter, image, dir.resolve("mnt"));
        Path mnt = mount.mountPoint;
        copy(steps, FULL_COPIES, "mount", mnt);
        steps.run("rsync -aHAX mount→host (second dir)", dir, "rsync -aHAX '" + mnt.resolve("rsync") + "'/ '"
                + dir.resolve("host2") + "'/");
        for (String copy : FULL_COPIES.keySet()) {
            compare(steps, copy + " mount vs host", host.resolve(copy), mnt.resolve(copy), true);
            steps.run(copy + " on the mount: the three hard links have one inode number (stat -c %i)",
                    mnt.resolve(copy), SAME_INODE);
        }
        compare(steps, "rsync back to host vs source", dir.resolve("src"), dir.resolve("host2"), true);
        steps.same("ln, ln, rm: every name's link count at once (stat -c %h), mount vs host", "host",
                steps.capture("ln, ln, rm and stat -c %h on the host", host, LINK_COUNTS), "mount",
                steps.capture("ln, ln, rm and stat -c %h on the mount", mnt, LINK_COUNTS));
        Map<String, String> before = new LinkedHashMap<>();
        for (String copy : FULL_COPIES.keySet()) {
            before.put(copy, both(listing(steps, mnt.resolve(copy), true), xattrs(steps, mnt.resolve(copy))));
        }
        remountAndCompare(steps, adapter, image, before, true);
        steps.assertAllPassed();
    }

    @ParameterizedTest
    @MethodSource("dev.iomap.fuse.RealToolsImage#adapters")
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void contentByTarCpAndRsyncOnTheMountEqualsTheHostCopies(String adapter) throws Exception {
        MountedImage.assumeFuse();
        RealToolsImage.assumeTools(List.of("tar", "rsync", "python3", "diff", "find"));
        Path image = dir.resolve("disk.img");
        MountedImage.format(adapter, image, RealToolsImage.SIZE);
        RealToolsSteps steps = steps(adapter + " plain files, content only");
        source(steps, "", false);
        Path host = Files.createDirectories(dir.resolve("host"));
        copy(steps, CONTENT_COPIES, "host", host);
        mount = MountedImage.mount(adapter, image, dir.resolve("mnt"));
        Path mnt = mount.mountPoint;
        copy(steps, CONTENT_COPIES, "mount", mnt);
        steps.run("rsync -r mount→host (second dir)", dir, "rsync -r '" + mnt.resolve("rsync") + "'/ '"
                + dir.resolve("host2") + "'/");
        for (String copy : CONTENT_COPIES.keySet()) {
            compare(steps, copy + " mount vs host", host.resolve(copy), mnt.resolve(copy), false);
        }
        compare(steps, "rsync back to host vs source", dir.resolve("src"), dir.resolve("host2"), false);
        Map<String, String> before = new LinkedHashMap<>();
        for (String copy : CONTENT_COPIES.keySet()) {
            before.put(copy, listing(steps, mnt.resolve(copy), false));
        }
        remountAndCompare(steps, adapter, image, before, false);
        steps.assertAllPassed();
    }

    /** @return the two texts, one after the other; null if either is */
    private static String both(String first, String second) {
        return first == null || second == null ? null : first + second;
    }

    /**
     * Unmounts, runs the adapter's fsck through the Java API, remounts and compares the listings (and
     * xattrs, if full) of the copies with those taken before; unmounts again.
     */
    private void remountAndCompare(RealToolsSteps steps, String adapter, Path image, Map<String, String> before,
            boolean full) throws Exception {
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
        for (var copy : before.entrySet()) {
            Path tree = mount.mountPoint.resolve(copy.getKey());
            String after = full ? both(listing(steps, tree, true), xattrs(steps, tree)) : listing(steps, tree, false);
            steps.same(copy.getKey() + " after remount", "before unmount", copy.getValue(), "after remount", after);
        }
        mount.unmount();
    }
}
