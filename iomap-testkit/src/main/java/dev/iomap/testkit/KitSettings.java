package dev.iomap.testkit;

/**
 * How long the randomised parts of the kit run, from system properties, so that CI runs a short pass
 * and a long pass is one flag away:
 *
 * <ul>
 *   <li>{@code fsx.ops} (default 300): operations of each model-checker run</li>
 *   <li>{@code fsx.seed} (default {@code iomap.test.seed}, else 1): base seed; each geometry mixes in
 *       its own name, so geometries run different sequences</li>
 *   <li>{@code fsx.checkEvery} (default 50): a full-file comparison every N operations</li>
 *   <li>{@code fsx.logDir} (default {@code target/fsx-logs}): where failing op logs are written</li>
 *   <li>{@code crash.points} (default 5): power cuts per crash-test run</li>
 *   <li>{@code crash.ops} (default 60): operations of each crash workload</li>
 * </ul>
 *
 * @param fsxOps model-checker operations per run
 * @param seed base seed
 * @param fullCheckEvery operations between full-file comparisons
 * @param logDir directory for failing op logs
 * @param crashPoints power cuts per crash run
 * @param crashOps operations per crash workload
 */
public record KitSettings(int fsxOps, long seed, int fullCheckEvery, java.nio.file.Path logDir, int crashPoints,
        int crashOps) {

    /** @return the settings from the system properties */
    public static KitSettings fromSystemProperties() {
        long defaultSeed = Long.getLong("iomap.test.seed", 0L);
        return new KitSettings(
                Integer.getInteger("fsx.ops", 300),
                Long.getLong("fsx.seed", defaultSeed == 0 ? 1 : defaultSeed),
                Integer.getInteger("fsx.checkEvery", 50),
                java.nio.file.Path.of(System.getProperty("fsx.logDir", "target/fsx-logs")),
                Integer.getInteger("crash.points", 5),
                Integer.getInteger("crash.ops", 60));
    }

    /**
     * A seed for one run: the base seed mixed with a label (adapter and geometry), so that runs on
     * different geometries explore different sequences yet each reproduces from the base seed.
     *
     * @param label what the run is
     * @return the seed
     */
    public long seedFor(String label) {
        long h = seed * 0x9E3779B97F4A7C15L;
        for (int i = 0; i < label.length(); i++) {
            h = (h ^ label.charAt(i)) * 0x100000001B3L;
        }
        return h ^ (h >>> 29);
    }
}
