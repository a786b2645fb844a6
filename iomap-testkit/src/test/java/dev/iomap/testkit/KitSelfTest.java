package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.iomap.testkit.crash.CrashConfig;
import dev.iomap.testkit.crash.CrashFailure;
import dev.iomap.testkit.crash.CrashRunner;
import dev.iomap.devices.CutMode;
import dev.iomap.testkit.fsx.FsxFailure;
import dev.iomap.testkit.fsx.FsxRunner;
import dev.iomap.testkit.fsx.OpLog;
import dev.iomap.testkit.toy.ToyAdapter;
import dev.iomap.testkit.toy.ToyFileSystem.Bug;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kit finds planted bugs, reports them usefully, and its logs replay them; a correct toy passes. */
class KitSelfTest {
    @TempDir
    Path logs;

    @Test
    void aCorrectFilesystemPassesTheModelCheckerAndTheCrashRunner() throws IOException {
        AdapterFixture toy = ToyAdapter.fixture(logs, 2000);
        assertThat(FsxRunner.run(toy).ops()).isEqualTo(2000);
        assertThat(CrashRunner.run(toy, CrashConfig.of(toy, CutMode.LOSE_UNFLUSHED)).crashPoints()).isEqualTo(8);
    }

    @Test
    void tornWritesCatchMetadataOverwrittenInPlace() {
        // The toy rewrites its only copy of the metadata in place, without a checksum: fine while
        // writes are atomic, garbage once one tears.
        AdapterFixture toy = ToyAdapter.fixture(logs, 100);
        CrashFailure failure = catchThrowableOfType(CrashFailure.class,
                () -> CrashRunner.run(toy, CrashConfig.of(toy, CutMode.TEAR_AND_REORDER).withSeed(3)));
        assertThat(failure).as("a torn metadata write is found").isNotNull();
        String point = failure.getMessage().replaceAll("(?s).*power cut at device write #(\\d+).*", "$1");
        assertThatThrownBy(() -> CrashRunner.run(toy, CrashConfig.of(toy, CutMode.TEAR_AND_REORDER).withSeed(3)
                .withCrashAt(java.util.List.of(Long.parseLong(point)))))
                .as("the failure reproduces from its seed and crash point alone")
                .isInstanceOf(CrashFailure.class)
                .hasMessageContaining("power cut at device write #" + point + " (mode TEAR_AND_REORDER");
    }

    @Test
    void theModelCheckerCatchesStaleDataAfterTruncateAndItsLogReplays() throws IOException {
        AdapterFixture buggy = ToyAdapter.fixture(logs, 2000, Bug.TRUNCATE_KEEPS_TAIL);
        FsxFailure failure = catchThrowableOfType(FsxFailure.class, () -> FsxRunner.run(buggy));
        assertThat(failure).as("the planted bug is found").isNotNull();
        assertThat(failure.getMessage())
                .contains("fsx on toy/b4k-p4k-o0: mismatch after op #")
                .contains("expected", "actual", "last ops touching", "op log");
        assertThat(failure.opLog()).exists();
        String log = Files.readString(failure.opLog());
        assertThat(log).startsWith("# fsx op log: adapter toy").contains("truncate");
        assertThat(OpLog.parse(log)).hasSize(failure.opIndex() + 1);

        FsxFailure replayed = catchThrowableOfType(FsxFailure.class, () -> FsxRunner.replay(buggy, failure.opLog()));
        assertThat(replayed).as("the log replays to the same failure").isNotNull();
        assertThat(replayed.opIndex()).isEqualTo(failure.opIndex());

        AdapterFixture fixed = ToyAdapter.fixture(logs, 2000);
        assertThat(FsxRunner.replay(fixed, failure.opLog()).ops()).isEqualTo(failure.opIndex() + 1);
    }

    @Test
    void theModelCheckerCatchesAHoleReportedOverDataAndItsLogReplays() throws IOException {
        AdapterFixture buggy = ToyAdapter.fixture(logs, 2000, Bug.SEEK_HOLE_AT_OFFSET);
        FsxFailure failure = catchThrowableOfType(FsxFailure.class, () -> FsxRunner.run(buggy));
        assertThat(failure).as("the planted bug is found").isNotNull();
        assertThat(failure.getMessage()).containsPattern("seekhole (\\d+) \\(size \\d+\\): found a hole at \\1, "
                + "inside a block that holds data \\(block \\d+\\.\\.\\d+; last ops touching it: #");
        FsxFailure replayed = catchThrowableOfType(FsxFailure.class, () -> FsxRunner.replay(buggy, failure.opLog()));
        assertThat(replayed).as("the log replays to the same failure").isNotNull();
        assertThat(replayed.opIndex()).isEqualTo(failure.opIndex());
        assertThat(FsxRunner.replay(ToyAdapter.fixture(logs, 2000), failure.opLog()).ops())
                .isEqualTo(failure.opIndex() + 1);
    }

    @Test
    void theCrashRunnerCatchesAnFsyncThatDoesNotFlush() {
        AdapterFixture buggy = ToyAdapter.fixture(logs, 100, Bug.FSYNC_WITHOUT_FLUSH);
        assertThatThrownBy(() -> CrashRunner.run(buggy, CrashConfig.of(buggy, CutMode.LOSE_UNFLUSHED)))
                .isInstanceOf(CrashFailure.class)
                .hasMessageContaining("power cut at device write #")
                .hasMessageContaining("reproduce: CrashRunner.run(");
    }
}
