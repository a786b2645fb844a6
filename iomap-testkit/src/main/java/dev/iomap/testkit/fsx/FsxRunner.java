package dev.iomap.testkit.fsx;

import dev.iomap.testkit.AdapterFixture;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An fsx-style model checker: random operations on one file, each checked against a
 * {@link FileModel} as it runs.
 *
 * <p>After every operation the size must match the model, every byte a read returns must match, and
 * the bytes past EOF in the last page must read as zero; seek data and seek hole must never report a
 * hole over data the model knows of, and must be exact where that decides the answer (see
 * {@link FileModel}); every {@link FsxConfig#fullCheckEvery}
 * operations, and at the end, the whole file is compared, and its extent report is checked against
 * the report of each block alone, so that no mapping claims a run longer than the blocks contiguous on
 * the device, on every geometry (with {@link dev.iomap.api.Capability#DENSE_FILES}, the seeks are exact
 * and the report covers every block below EOF). The run ends with a remount and one more
 * full comparison, and every remount (in the run or at its end) runs the adapter's fsck.
 *
 * <p>On a mismatch the run stops with an {@link FsxFailure} whose message gives the offsets, the
 * expected and actual bytes and the last operations that touched them, and names the op log it
 * wrote: one op per line, which {@link #replay} runs again exactly.
 *
 * <pre>{@code
 * FsxRunner.run(fixture);                                   // seed and op count from KitSettings
 * FsxRunner.replay(fixture, Path.of("target/fsx-logs/x.fsxlog"));
 * }</pre>
 */
public final class FsxRunner {

    private FsxRunner() {
    }

    /**
     * What a run did.
     *
     * @param label adapter and geometry
     * @param seed the seed, or 0 for a replay
     * @param ops operations run
     * @param opCounts operations run, by name
     */
    public record Result(String label, long seed, int ops, Map<String, Integer> opCounts) {
    }

    /**
     * Runs the fixture's configuration ({@link FsxConfig#of}).
     *
     * @param fixture the adapter under test
     * @return what ran
     * @throws FsxFailure on a mismatch
     * @throws IOException if the device or the log cannot be set up
     */
    public static Result run(AdapterFixture fixture) throws IOException {
        return run(fixture, FsxConfig.of(fixture));
    }

    /**
     * @param fixture the adapter under test
     * @param config seed, op count, sizes
     * @return what ran
     * @throws FsxFailure on a mismatch
     * @throws IOException if the device or the log cannot be set up
     */
    public static Result run(AdapterFixture fixture, FsxConfig config) throws IOException {
        List<String> header = header(fixture, "seed " + config.seed() + " (base seed " + fixture.settings().seed()
                + ", -Dfsx.seed)");
        try (FsxSession session = new FsxSession(fixture, config.fullCheckEvery(), config.logDir(), header,
                "seed" + config.seed(), config.file())) {
            // No op reaches past the adapter's file-size limit (an ext2-like one with 1 KiB blocks: 268 KiB).
            long maxFileSize = Math.min(config.maxFileSize(), session.fileSizeLimit());
            OpGenerator generator = new OpGenerator(config.seed(), fixture.capabilities(), fixture.geometry(),
                    maxFileSize, (int) Math.min(config.maxOpLength(), maxFileSize), config.file());
            for (int i = 0; i < config.ops(); i++) {
                session.execute(generator.next(session.modelSize()));
            }
            session.finish();
            return new Result(fixture.label(), config.seed(), config.ops(), counts(session.ops()));
        }
    }

    /**
     * Runs the ops of a log exactly, with every check of a generated run.
     *
     * @param fixture the adapter under test
     * @param ops the ops
     * @return what ran
     * @throws FsxFailure on a mismatch
     * @throws IOException if the device cannot be set up
     */
    public static Result replay(AdapterFixture fixture, List<Op> ops) throws IOException {
        return replay(fixture, FsxConfig.of(fixture), ops);
    }

    /**
     * Runs the ops of a log exactly on the file of {@code config} (for logs of runs with an
     * {@link FsxFile} other than the default).
     *
     * @param fixture the adapter under test
     * @param config the file, log directory and check interval (seed and op count are not used)
     * @param ops the ops
     * @return what ran
     * @throws FsxFailure on a mismatch
     * @throws IOException if the device cannot be set up
     */
    public static Result replay(AdapterFixture fixture, FsxConfig config, List<Op> ops) throws IOException {
        List<String> header = header(fixture, "replay of " + ops.size() + " ops");
        try (FsxSession session = new FsxSession(fixture, config.fullCheckEvery(), config.logDir(), header,
                "replay", config.file())) {
            for (Op op : ops) {
                session.execute(op);
            }
            session.finish();
            return new Result(fixture.label(), 0, ops.size(), counts(session.ops()));
        }
    }

    /**
     * @param fixture the adapter under test
     * @param log an op log file
     * @return what ran
     * @throws FsxFailure on a mismatch
     * @throws IOException if the log cannot be read
     */
    public static Result replay(AdapterFixture fixture, Path log) throws IOException {
        return replay(fixture, OpLog.read(log));
    }

    private static List<String> header(AdapterFixture fixture, String origin) {
        List<String> header = new ArrayList<>();
        header.add("fsx op log: adapter " + fixture.adapter().name() + ", geometry " + fixture.geometry().name()
                + " (block " + fixture.geometry().blockSize() + ", page " + fixture.geometry().pageSize()
                + ", maxFolioOrder " + fixture.geometry().maxFolioOrder() + ")");
        header.add(origin + (fixture.isUnderMemoryPressure()
                ? "; mounted under memory pressure (AdapterFixture.underMemoryPressure())" : ""));
        header.add("replay: FsxRunner.replay(fixture, OpLog.read(path)) with the same geometry");
        return header;
    }

    private static Map<String, Integer> counts(List<Op> ops) {
        Map<String, Integer> counts = new TreeMap<>();
        for (Op op : ops) {
            counts.merge(op.toLine().split(" ", 2)[0], 1, Integer::sum);
        }
        return counts;
    }
}
