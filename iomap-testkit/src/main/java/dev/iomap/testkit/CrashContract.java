package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.RenameFlag;
import dev.iomap.api.XattrMode;
import dev.iomap.testkit.crash.CrashConfig;
import dev.iomap.testkit.crash.CrashRunner;
import dev.iomap.testkit.crash.MetadataCuts;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.PowerCutDevice;
import java.io.IOException;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Power cuts ({@link CrashRunner}): what fsync made durable survives, the journal replays, nothing
 * else shows up as garbage, and fsck is clean. Runs only for adapters declaring
 * {@link Capability#DURABLE_FSYNC}; {@code crash.points} cuts per mode (5 by default). Metadata
 * changes (exchange, hard link, symbolic link, attributes, extended attributes) are cut at their device
 * writes by {@link MetadataCuts}: old or new state, the new one once fsync or sync returned.
 */
public abstract class CrashContract extends AdapterContract {

    @BeforeEach
    void needsDurableFsync() {
        assumeCapable(Capability.DURABLE_FSYNC);
    }

    @Test
    void fsyncedDataSurvivesAPowerCutRightAfterIt() throws IOException {
        PowerCutDevice power = new PowerCutDevice(kit().newFormattedDevice());
        IomapFileSystem crashing = kit().mount(power);
        byte[] durable;
        try (IomapFile file = crashing.create("/a")) {
            durable = writePattern(file, 0, 3 * pageSize() + 5, 1);
            file.fsync();
            writePattern(file, durable.length, 1000, 2);
        }
        RamBlockDevice image = power.cut(CutMode.LOSE_UNFLUSHED, new Random(1));
        try {
            crashing.close();
        } catch (IOException expected) {
            // The power is off.
        }
        try (IomapFileSystem recovered = kit().mount(image); IomapFile file = recovered.open("/a")) {
            byte[] content = readAll(file);
            assertThat(content.length).isBetween(durable.length, durable.length + 1000);
            assertBytes(java.util.Arrays.copyOf(content, durable.length), durable, 0);
        }
        assertThat(kit().fsck(image).problems()).isEmpty();
    }

    @Test
    void aFreshFilesystemSurvivesAPowerCut() throws IOException {
        PowerCutDevice power = new PowerCutDevice(kit().newFormattedDevice());
        IomapFileSystem crashing = kit().mount(power);
        RamBlockDevice image = power.cut(CutMode.TEAR_AND_REORDER, new Random(2));
        try {
            crashing.close();
        } catch (IOException expected) {
            // The power is off.
        }
        try (IomapFileSystem recovered = kit().mount(image)) {
            assertThat(recovered.readdir("/")).isEmpty();
        }
        assertThat(kit().fsck(image).problems()).isEmpty();
    }

    /**
     * Issue 13: a power cut after an exchange of a directory and a file in different parents leaves
     * exactly the old or the new state (never both names on one inode, never a lost name), and the new
     * one once sync returned; fsck is clean either way.
     */
    @Test
    void aPowerCutAroundAnExchangeLeavesTheOldOrTheNewState() throws IOException {
        assumeCapable(Capability.DIRECTORIES, Capability.RENAME_EXCHANGE);
        for (int seed = 0; seed < 4; seed++) {
            for (CutMode mode : CutMode.values()) {
                boolean synced = seed % 2 == 1;
                PowerCutDevice power = new PowerCutDevice(kit().newFormattedDevice());
                IomapFileSystem crashing = kit().mount(power);
                crashing.mkdir("/p");
                crashing.mkdir("/q");
                crashing.mkdir("/p/x");
                try (IomapFile one = crashing.create("/p/x/one"); IomapFile two = crashing.create("/q/f")) {
                    write(one, 0, new byte[] {1});
                    write(two, 0, new byte[] {2, 2});
                }
                crashing.sync();
                crashing.rename("/p/x", "/q/f", EnumSet.of(RenameFlag.EXCHANGE));
                if (synced) {
                    crashing.sync();
                }
                RamBlockDevice image = power.cut(mode, new Random(seed));
                try {
                    crashing.close();
                } catch (IOException expected) {
                    // The power is off.
                }
                String state;
                try (IomapFileSystem recovered = kit().mount(image)) {
                    state = exchangeState(recovered);
                }
                assertThat(state).as("%s seed %d synced %s", mode, seed, synced)
                        .isIn(synced ? List.of("new") : List.of("old", "new"));
                assertThat(kit().fsck(image).problems()).as("%s seed %d", mode, seed).isEmpty();
            }
        }
    }

    private static final MetadataCuts.Step SYNC = IomapFileSystem::sync;

    /** @return how the change is made durable, for messages */
    private static String then(MetadataCuts.Step durable) {
        return durable == null ? " (not synced)" : durable == SYNC ? " then sync" : " then fsync";
    }

    private static MetadataCuts.Step fsyncOf(String path) {
        return fs -> {
            try (IomapFile file = fs.open(path)) {
                file.fsync();
            }
        };
    }

    private static void file(IomapFileSystem fs, String path, byte[] content) throws IOException {
        try (IomapFile file = fs.create(path)) {
            write(file, 0, content);
        }
    }

    private static byte[] contentOf(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            return readAll(file);
        }
    }

    /**
     * A power cut anywhere in or after a hard link leaves the file with one name or with both, its
     * count matching; after sync, both.
     */
    @Test
    void aPowerCutAroundAHardLinkLeavesTheOldOrTheNewState() throws IOException {
        assumeCapable(Capability.HARD_LINKS);
        byte[] data = TestData.pattern(5, 0, 3 * blockSize() + 1);
        for (MetadataCuts.Step durable : Arrays.asList(null, SYNC)) {
            MetadataCuts.check(kit(), "link" + then(durable), fs -> file(fs, "/a", data), fs -> fs.createLink("/b", "/a"), durable,
                    fs -> {
                        List<String> names = fs.readdir("/").stream().map(DirEntry::name).toList();
                        if (!Arrays.equals(contentOf(fs, "/a"), data)) {
                            return "/a damaged";
                        }
                        FileStat a = fs.stat("/a");
                        if (names.equals(List.of("a")) && a.linkCount() == 1) {
                            return "old";
                        }
                        boolean linked = names.equals(List.of("a", "b")) && fs.stat("/b").ino() == a.ino()
                                && a.linkCount() == 2;
                        return linked ? "new" : "names " + names + ", link count " + a.linkCount();
                    });
        }
    }

    /** A power cut around a symbolic link's creation leaves no link or the whole target; after sync, the link. */
    @Test
    void aPowerCutAroundASymlinkLeavesNoLinkOrTheWholeTarget() throws IOException {
        assumeCapable(Capability.SYMLINKS);
        String target = "dir/" + "x".repeat(600) + "/" + FileNames.decode(new byte[] {(byte) 0xff, 'e'});
        for (MetadataCuts.Step durable : Arrays.asList(null, SYNC)) {
            MetadataCuts.check(kit(), "symlink" + then(durable), fs -> file(fs, "/f", new byte[] {1}),
                    fs -> fs.createSymbolicLink("/l", target, NewInodeAttributes.defaults(FileType.SYMLINK)), durable,
                    fs -> {
                        List<String> names = fs.readdir("/").stream().map(DirEntry::name).toList();
                        if (names.equals(List.of("f"))) {
                            return "old";
                        }
                        if (!names.equals(List.of("f", "l"))) {
                            return "names " + names;
                        }
                        String read = fs.readSymbolicLink("/l");
                        return read.equals(target) && fs.lstat("/l").size() == FileNames.encode(target).length ? "new"
                                : "target " + read;
                    });
        }
    }

    /** A power cut around an attribute change leaves all of it or none; after fsync or sync, all. */
    @Test
    void aPowerCutAroundSetAttributesLeavesAllOrNoneOfTheChange() throws IOException {
        assumeCapable(Capability.POSIX_ATTRIBUTES);
        Instant oldTime = Instant.ofEpochSecond(1_000_000_000L, 1);
        Instant newAtime = Instant.ofEpochSecond(-5_000_000L, 999_999_999);
        Instant newMtime = Instant.ofEpochSecond(2_000_000_000L, 123_456_789);
        for (MetadataCuts.Step durable : Arrays.asList(null, SYNC, fsyncOf("/f"))) {
            MetadataCuts.check(kit(), "setAttributes" + then(durable), fs -> {
                try (IomapFile file = fs.create("/f", new NewInodeAttributes(0644, 1, 2))) {
                    write(file, 0, new byte[] {1, 2, 3});
                }
                fs.setAttributes("/f", AttributeChange.none().withAtime(oldTime).withMtime(oldTime));
            }, fs -> fs.setAttributes("/f", AttributeChange.none().withMode(0600).withUid(7).withGid(8)
                    .withAtime(newAtime).withMtime(newMtime)), durable, fs -> {
                        FileStat f = fs.stat("/f");
                        List<Object> attributes = List.of(f.mode(), f.uid(), f.gid(), f.atime(), f.mtime(), f.size());
                        if (attributes.equals(List.of(0644, 1, 2, oldTime, oldTime, 3L))) {
                            return "old";
                        }
                        return attributes.equals(List.of(0600, 7, 8, newAtime, newMtime, 3L)) ? "new"
                                : "attributes " + attributes;
                    });
        }
    }

    /** A power cut around a replaced extended attribute leaves the old value or the new, never a mix. */
    @Test
    void aPowerCutAroundSetXattrLeavesTheOldOrTheNewValue() throws IOException {
        assumeCapable(Capability.XATTRS);
        byte[] oldValue = TestData.pattern(1, 0, 3000);
        byte[] newValue = TestData.pattern(2, 0, 5000);
        byte[] kept = TestData.pattern(3, 0, 100);
        for (MetadataCuts.Step durable : Arrays.asList(null, SYNC, fsyncOf("/f"))) {
            MetadataCuts.check(kit(), "setXattr" + then(durable), fs -> {
                file(fs, "/f", new byte[] {9});
                fs.setXattr("/f", "user.v", oldValue, XattrMode.CREATE);
                fs.setXattr("/f", "trusted.kept", kept, XattrMode.CREATE);
            }, fs -> fs.setXattr("/f", "user.v", newValue, XattrMode.REPLACE), durable, fs -> {
                if (!fs.listXattrs("/f").equals(List.of("trusted.kept", "user.v"))
                        || !Arrays.equals(fs.getXattr("/f", "trusted.kept"), kept)) {
                    return "attributes " + fs.listXattrs("/f");
                }
                byte[] value = fs.getXattr("/f", "user.v");
                if (Arrays.equals(value, oldValue)) {
                    return "old";
                }
                return Arrays.equals(value, newValue) ? "new" : "a value of " + value.length + " bytes, neither";
            });
        }
    }

    /** A power cut at any device write of an exchange and the sync after it: the old or the new state. */
    @Test
    void aPowerCutAnywhereInAnExchangeLeavesTheOldOrTheNewState() throws IOException {
        assumeCapable(Capability.DIRECTORIES, Capability.RENAME_EXCHANGE);
        for (MetadataCuts.Step durable : Arrays.asList(null, SYNC)) {
            MetadataCuts.check(kit(), "exchange" + then(durable), fs -> {
                fs.mkdir("/p");
                fs.mkdir("/q");
                fs.mkdir("/p/x");
                file(fs, "/p/x/one", new byte[] {1});
                file(fs, "/q/f", new byte[] {2, 2});
            }, fs -> fs.rename("/p/x", "/q/f", EnumSet.of(RenameFlag.EXCHANGE)), durable, CrashContract::exchangeState);
        }
    }

    /** @return "old" or "new" when the names are exactly one of the two states, else what they are */
    private static String exchangeState(IomapFileSystem recovered) throws IOException {
        FileType x = recovered.stat("/p/x").type();
        FileType f = recovered.stat("/q/f").type();
        String dir = x == FileType.DIRECTORY ? "/p/x" : "/q/f";
        String file = x == FileType.DIRECTORY ? "/q/f" : "/p/x";
        if (x == f) {
            return "both " + x;
        }
        byte[] inside;
        byte[] content;
        try (IomapFile one = recovered.open(dir + "/one"); IomapFile two = recovered.open(file)) {
            inside = readAll(one);
            content = readAll(two);
        }
        if (!Arrays.equals(inside, new byte[] {1}) || !Arrays.equals(content, new byte[] {2, 2})
                || recovered.readdir(dir).size() != 1) {
            return "damaged: " + Arrays.toString(inside) + " " + Arrays.toString(content);
        }
        return x == FileType.DIRECTORY ? "old" : "new";
    }

    @Test
    void randomWorkloadLosingUnflushedWrites() throws IOException {
        CrashRunner.Result result = CrashRunner.run(kit(), CrashConfig.of(kit(), CutMode.LOSE_UNFLUSHED));
        report(result);
    }

    @Test
    void randomWorkloadWithTornAndReorderedWrites() throws IOException {
        CrashRunner.Result result = CrashRunner.run(kit(), CrashConfig.of(kit(), CutMode.TEAR_AND_REORDER));
        report(result);
    }

    private static void report(CrashRunner.Result result) {
        assertThat(result.crashPoints()).isPositive();
        System.out.println("crash " + result.label() + ": " + result.crashPoints() + " power cuts verified over "
                + result.workloads() + " workloads (" + result.deviceWrites() + " device writes), seed "
                + result.seed());
    }
}
