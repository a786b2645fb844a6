package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.testkit.fsx.FsxConfig;
import dev.iomap.testkit.fsx.FsxRunner;
import dev.iomap.testkit.fsx.Op;
import dev.iomap.testkit.fsx.OpLog;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fsx-style model checker ({@link FsxRunner}) on the adapter: {@code fsx.ops} random operations
 * (300 by default, {@code -Dfsx.ops=1000000} for a long pass) from a seed mixed from {@code fsx.seed}
 * and the adapter and geometry.
 */
public abstract class FsxContract extends AdapterContract {

    @Test
    void randomOperationsMatchTheModel() throws IOException {
        FsxRunner.Result result = FsxRunner.run(kit());
        assertThat(result.ops()).isEqualTo(kit().settings().fsxOps());
        System.out.println("fsx " + result.label() + ": " + result.ops() + " ops, seed " + result.seed() + ", "
                + result.opCounts());
    }

    @Test
    void randomOperationsUnderMemoryPressure() throws IOException {
        AdapterFixture pressured = kit().underMemoryPressure();
        FsxRunner.Result result = FsxRunner.run(pressured);
        assertThat(result.ops()).isEqualTo(kit().settings().fsxOps());
        System.out.println("fsx " + result.label() + ": " + result.ops() + " ops, seed " + result.seed() + ", "
                + result.opCounts());
    }

    @Test
    void aShortRunReplaysFromItsOwnLog() throws IOException {
        FsxConfig config = FsxConfig.of(kit()).withOps(40)
                .withSeed(kit().settings().seedFor(kit().label() + "/replay"));
        FsxRunner.run(kit(), config);
        List<String> lines = new java.util.ArrayList<>();
        lines.add("# a hand-written log: every op once");
        lines.add("write 0 5000 1");
        lines.add("mapwrite 100 50 2");
        lines.add("read 0 6000");
        lines.add("mapread 4990 10");
        lines.add("seekdata 10");
        lines.add("seekhole 4990");
        lines.add("seekhole 6000");
        lines.add("copy 0 6000 100");
        lines.add("fsync");
        lines.add("fdatasync");
        lines.add("dropcache");
        lines.add("sync");
        lines.add("remount");
        lines.add("check");
        if (has(dev.iomap.api.Capability.TRUNCATE)) {
            lines.add("truncate 3000");
            lines.add("truncate 9000");
        }
        if (has(dev.iomap.api.Capability.FALLOCATE)) {
            lines.add("fallocate 8000 4096 keep");
            lines.add("fallocate 9000 4096 extend");
        }
        if (has(dev.iomap.api.Capability.PUNCH_HOLE)) {
            lines.add("punch 10 5000");
        }
        if (has(dev.iomap.api.Capability.ZERO_RANGE)) {
            lines.add("zero 100 200 keep");
            lines.add("zero 13000 10 extend");
        }
        List<Op> ops = OpLog.parse(String.join("\n", lines));
        for (Op op : ops) {
            assertThat(Op.parse(op.toLine())).isEqualTo(op);
        }
        FsxRunner.Result result = FsxRunner.replay(kit(), ops);
        assertThat(result.ops()).isEqualTo(ops.size());
    }
}
