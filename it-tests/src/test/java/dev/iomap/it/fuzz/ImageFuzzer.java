package dev.iomap.it.fuzz;

import dev.iomap.devices.ZoneLayout;
import dev.iomap.testkit.Geometry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs the mutants of every target: builds each pristine image once, makes {@code mutants} mutants
 * of each {@link MutationKind} from the seed, runs each in a thread of its own with a time limit, and
 * counts the outcomes. Mutant {@code i} of a kind on a target depends on the seed, the target, the
 * kind and {@code i} only, so one mutant is rebuilt alone from its reproduction line.
 *
 * @param seed the seed
 * @param mutants mutants per target and kind
 * @param targetFilter only targets whose "adapter/geometry" contains it (empty: all)
 * @param kindFilter only this kind (null: all)
 * @param mutantFilter only this mutant index (negative: all)
 * @param timeoutSeconds the time one mutant may take before it counts as a hang
 * @param verbose whether to print every mutant's outcome (else only those changing a forged file)
 */
record ImageFuzzer(long seed, int mutants, String targetFilter, MutationKind kindFilter, int mutantFilter,
        long timeoutSeconds, boolean verbose) {

    /** The adapters on the geometries they are fuzzed on. */
    static List<FuzzTarget> targets() {
        return List.of(
                new XfsLikeTarget("b4k-ag2", 4096, 4096, 4L << 20, Map.of("agcount", "2"), new Geometry(4096, 4096, 0)),
                new XfsLikeTarget("b1k-s512-ag4-j64", 1024, 512, 4L << 20,
                        Map.of("agcount", "4", "journalblocks", "64"), Geometry.largeFolios(1024, 65536)),
                new XfsLikeTarget("b512", 512, 512, 2L << 20, Map.of(), new Geometry(512, 4096, 0)),
                new XfsLikeTarget("b4k-crashed", 4096, 4096, 4L << 20, Map.of("journalblocks", "256"),
                        new Geometry(4096, 4096, 0), true),
                new ZonefsLikeTarget("b4k-cnv3", 4096, new ZoneLayout(128L << 10, 96L << 10, 8, 3, 4),
                        new Geometry(4096, 4096, 0)),
                new ZonefsLikeTarget("b1k-seq-only", 1024, new ZoneLayout(64L << 10, 64L << 10, 7, 0, 0),
                        new Geometry(1024, 4096, 2)),
                new SnapfsTarget("b4k", 4096, 4096, 2L << 20, new Geometry(4096, 4096, 0)),
                new SnapfsTarget("b1k-s512", 1024, 512, 2L << 20, new Geometry(1024, 65536, 0)),
                new Gfs2LikeTarget("b4k-j2-rg256", 4096, 4L << 20, Map.of("journals", "2", "rgblocks", "256"),
                        new Geometry(4096, 4096, 0), false, false),
                new Gfs2LikeTarget("b1k-jdata", 1024, 2L << 20, Map.of(), Geometry.largeFolios(1024, 65536), false, true),
                new Gfs2LikeTarget("b512-rg2048", 512, 2L << 20, Map.of("rgblocks", "2048"), new Geometry(512, 4096, 0),
                        false, false),
                new Gfs2LikeTarget("b4k-crashed", 4096, 4L << 20, Map.of("journalblocks", "256"),
                        new Geometry(4096, 4096, 0), true, true),
                new BcachefsLikeTarget("b4k-crc32c", 4096, 4L << 20, Map.of(), new Geometry(4096, 4096, 0), false),
                new BcachefsLikeTarget("b1k-none-ext8k", 1024, 2L << 20, Map.of("checksum", "none", "extentmax", "8192"),
                        Geometry.largeFolios(1024, 65536), false),
                new BcachefsLikeTarget("b1k-zstd-xxhash", 1024, 2L << 20, Map.of("checksum", "xxhash64",
                        "compression", "zstd"), new Geometry(1024, 4096, 2), false),
                new BcachefsLikeTarget("b1k-crashed", 1024, 2L << 20, Map.of(), new Geometry(1024, 4096, 0), true));
    }

    /**
     * One mutant that broke a rule.
     *
     * @param reproduce the system properties that run it alone
     * @param mutation what was done to the image
     * @param violation the rule broken
     */
    record Failure(String reproduce, String mutation, String violation) {
        @Override
        public String toString() {
            return reproduce + ": " + mutation + ": " + violation;
        }
    }

    /**
     * @param table the outcome counts
     * @param failures the mutants that broke a rule
     * @param mutants how many mutants ran
     */
    record Result(OutcomeTable table, List<Failure> failures, int mutants) {
    }

    /** @return the adapters of {@link #targets}, in order, each once */
    static List<String> adapters() {
        return targets().stream().map(FuzzTarget::adapter).distinct().toList();
    }

    /**
     * @param adapter an adapter's name
     * @return whether the target filter selects at least one of its targets
     */
    boolean selects(String adapter) {
        return targets().stream().anyMatch(t -> t.adapter().equals(adapter) && t.toString().contains(targetFilter));
    }

    /**
     * Runs the mutants of the targets of one adapter that the filters select.
     *
     * @param adapter the adapter's name
     * @return the outcomes, the violations and how many mutants ran
     */
    Result run(String adapter) throws IOException, InterruptedException {
        OutcomeTable table = new OutcomeTable();
        List<Failure> failures = new ArrayList<>();
        int ran = 0;
        for (FuzzTarget target : targets()) {
            if (!target.adapter().equals(adapter) || !target.toString().contains(targetFilter)) {
                continue;
            }
            BaseImage base = BaseImage.build(target);
            System.out.println("image fuzz " + target + ": " + base.map().summary());
            for (MutationKind kind : MutationKind.values()) {
                if (kindFilter != null && kind != kindFilter) {
                    continue;
                }
                for (int index = 0; index < mutants; index++) {
                    if (mutantFilter >= 0 && index != mutantFilter) {
                        continue;
                    }
                    Mutation mutation = new Mutator(base.map(), base.image(), random(target, kind, index)).make(kind);
                    MutantRun.Verdict verdict = runWithTimeout(base, mutation);
                    table.add(target.adapter(), kind, verdict);
                    ran++;
                    if (verdict.outcome() == Outcome.CHANGED_IN_FORGED_FILE_ONLY || verbose) {
                        System.out.println("image fuzz " + target + " " + kind + " #" + index + ": " + verdict.outcome()
                                + ": " + mutation.description());
                    }
                    if (verdict.violation() != null) {
                        failures.add(new Failure("-Diomap.fuzz.seed=" + seed + " -Diomap.fuzz.target=" + target
                                + " -Diomap.fuzz.kind=" + kind + " -Diomap.fuzz.mutant=" + index,
                                mutation.description(), verdict.violation()));
                    }
                }
            }
        }
        return new Result(table, failures, ran);
    }

    private Random random(FuzzTarget target, MutationKind kind, int index) {
        long mixed = seed * 0x9E3779B97F4A7C15L ^ target.toString().hashCode() * 0xC2B2AE3D27D4EB4FL
                ^ (kind.ordinal() * 1_000_003L + index) * 0x165667B19E3779F9L;
        return new Random(mixed);
    }

    private MutantRun.Verdict runWithTimeout(BaseImage base, Mutation mutation) throws InterruptedException {
        FutureTask<MutantRun.Verdict> task = new FutureTask<>(() -> new MutantRun(base, mutation).run());
        Thread thread = new Thread(task, "fuzz " + base.target() + " " + mutation.kind());
        thread.setDaemon(true);
        thread.start();
        try {
            return task.get(timeoutSeconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            StringBuilder stack = new StringBuilder();
            for (StackTraceElement frame : thread.getStackTrace()) {
                if (stack.length() > 600) {
                    break;
                }
                stack.append(stack.isEmpty() ? "" : " <- ").append(frame);
            }
            thread.interrupt();
            return new MutantRun.Verdict(Outcome.VIOLATION, "hang: no verdict in " + timeoutSeconds + " s; stuck at "
                    + stack, MutantRun.WorkloadEnd.NOT_RUN);
        } catch (ExecutionException e) {
            return new MutantRun.Verdict(Outcome.VIOLATION, "the fuzzer failed: " + MutantRun.describe(e.getCause()),
                    MutantRun.WorkloadEnd.NOT_RUN);
        }
    }
}
