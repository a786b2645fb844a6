package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.Capability;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.RenameFlag;
import dev.iomap.testkit.crash.CrashConfig;
import dev.iomap.testkit.crash.CrashRunner;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.PowerCutDevice;
import java.io.IOException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Power cuts ({@link CrashRunner}): what fsync made durable survives, the journal replays, nothing
 * else shows up as garbage, and fsck is clean. Runs only for adapters declaring
 * {@link Capability#DURABLE_FSYNC}; {@code crash.points} cuts per mode (5 by default).
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
