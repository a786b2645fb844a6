package dev.iomap.testkit.crash;

import dev.iomap.testkit.AdapterFixture;
import dev.iomap.devices.CutMode;
import java.util.List;

/**
 * How a crash-test run goes.
 *
 * @param seed the random seed of the workload, the crash points and the torn writes
 * @param crashPoints how many power cuts to try (images taken at random device writes; the last one
 *     cuts the power for real)
 * @param ops operations in the workload
 * @param mode what a cut keeps of unflushed writes
 * @param crashAt if not empty, exactly these device-write counts are the crash points (to reproduce a
 *     failure); else they are chosen at random
 */
public record CrashConfig(long seed, int crashPoints, int ops, CutMode mode, List<Long> crashAt) {

    /** Validates and copies. */
    public CrashConfig {
        if (crashPoints < 1 || ops < 1) {
            throw new IllegalArgumentException("need at least one crash point and one op, got " + crashPoints
                    + " and " + ops);
        }
        java.util.Objects.requireNonNull(mode, "mode");
        crashAt = List.copyOf(crashAt);
    }

    /**
     * The fixture's settings ({@code crash.points}, {@code crash.ops}) and a seed mixed from the base
     * seed, the fixture's label and the mode.
     *
     * @param fixture the adapter under test
     * @param mode what a cut keeps
     * @return the configuration
     */
    public static CrashConfig of(AdapterFixture fixture, CutMode mode) {
        var settings = fixture.settings();
        return new CrashConfig(settings.seedFor(fixture.label() + "/crash/" + mode), settings.crashPoints(),
                settings.crashOps(), mode, List.of());
    }

    /**
     * @param value the seed
     * @return a copy with that seed
     */
    public CrashConfig withSeed(long value) {
        return new CrashConfig(value, crashPoints, ops, mode, crashAt);
    }

    /**
     * @param writeCounts the device-write counts to cut at
     * @return a copy cutting exactly there
     */
    public CrashConfig withCrashAt(List<Long> writeCounts) {
        return new CrashConfig(seed, Math.max(1, writeCounts.size()), ops, mode, writeCounts);
    }
}
