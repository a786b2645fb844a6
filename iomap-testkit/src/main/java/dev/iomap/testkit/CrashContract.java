package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.Capability;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.testkit.crash.CrashConfig;
import dev.iomap.testkit.crash.CrashRunner;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.PowerCutDevice;
import java.io.IOException;
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
