package dev.iomap.testbed;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.testbed.History.Event;
import dev.iomap.testbed.History.Op;
import dev.iomap.testbed.History.Result;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The test bed's checker on hand-made histories: each promise kept, and each broken once. */
class HistoryCheckerTest {
    private static final String R = "reg/r0";

    @TempDir
    Path dir;

    private final History history = new History();

    private void op(String node, String kind, String key, String value, long invoke, long complete, Result result) {
        history.add(new Op(history.nextId(), node, kind, key, value, invoke, complete, result, ""));
    }

    private List<String> check() throws IOException {
        return new HistoryChecker(history, dir).check();
    }

    @Test
    void aReadOfTheLatestFsyncdWriteKeepsEveryPromise() throws IOException {
        op("n1", "write", R, "n1:1", 0, 5, Result.OK);
        op("n2", "write", R, "n2:2", 6, 10, Result.OK);
        op("n3", "read", R, "n2:2", 20, 25, Result.OK);
        op("n1", "read", R, "n2:2", 30, 35, Result.OK);

        assertThat(check()).isEmpty();
    }

    @Test
    void aReadOfAWriteStillRunningMaySeeEitherValue() throws IOException {
        op("n1", "write", R, "n1:1", 0, 5, Result.OK);
        op("n2", "write", R, "n2:2", 6, 40, Result.OK);
        op("n3", "read", R, "n1:1", 20, 25, Result.OK);
        op("n1", "read", R, "n2:2", 21, 26, Result.OK);

        assertThat(check()).isEmpty();
    }

    @Test
    void theEmptyFileAfterAnFsyncdWriteIsALostWrite() throws IOException {
        op("n1", "write", R, "n1:1", 0, 5, Result.OK);
        op("n2", "read", R, "", 20, 25, Result.OK);

        assertThat(check()).singleElement().asString().contains("saw the empty file").contains("a lost write");
    }

    @Test
    void aValueReplacedBeforeTheReadBeganIsStale() throws IOException {
        op("n1", "write", R, "n1:1", 0, 5, Result.OK);
        op("n2", "write", R, "n2:2", 6, 10, Result.OK);
        op("n3", "read", R, "n1:1", 20, 25, Result.OK);

        assertThat(check()).singleElement().asString().contains("saw n1:1 though n2's write n2:2 had replaced it");
    }

    @Test
    void aTornValueIsReported() throws IOException {
        op("n1", "write", R, "n1:1", 0, 5, Result.OK);
        op("n2", "read", R, "TORN", 20, 25, Result.OK);

        assertThat(check()).singleElement().asString().contains("torn");
    }

    @Test
    void aWriteOfAFencedNodeMustNeverBeSeen() throws IOException {
        op("n1", "write", R, "n1:0", 0, 5, Result.OK);
        history.event(new Event("fence", "n1", 100));
        op("n1", "write", R, "n1:2", 150, 160, Result.FAIL);
        op("n2", "read", R, "n1:2", 200, 210, Result.OK);

        assertThat(check()).singleElement().asString().contains("while it was fenced: a late write landed");
    }

    @Test
    void aFailedWriteBeforeTheFenceMayLandUntilTheFence() throws IOException {
        op("n1", "write", R, "n1:1", 50, 60, Result.FAIL);
        history.event(new Event("fence", "n1", 100));
        op("n2", "read", R, "n1:1", 200, 210, Result.OK);

        assertThat(check()).isEmpty();
    }

    @Test
    void aSuccessInvokedWhileFencedIsAViolation() throws IOException {
        history.event(new Event("fence", "n1", 100));
        op("n1", "append", Workload.LOG, "n1:1", 150, 160, Result.OK);
        history.event(new Event("unfence", "n1", 300));
        op("n1", "append", Workload.LOG, "n1:2", 350, 360, Result.OK);

        assertThat(check()).singleElement().asString().contains("n1 append n1:1 succeeded though invoked while n1 was fenced");
    }

    @Test
    void appendsLostTwiceOrTornAreReported() throws IOException {
        op("n1", "append", Workload.LOG, "n1:1", 0, 5, Result.OK);
        op("n2", "append", Workload.LOG, "n2:2", 1, 6, Result.OK);
        op("n1", "append", Workload.LOG, "n1:3", 7, 9, Result.OK);
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        log.writeBytes(HistoryChecker.record("n1:1"));
        log.writeBytes(HistoryChecker.record("n1:1"));
        log.writeBytes(HistoryChecker.record("n1:3"));
        log.writeBytes(new byte[] {'A', '|'});
        Files.write(dir.resolve("log-1.bin"), log.toByteArray());
        op("n3", "readlog", Workload.LOG, "log-1.bin", 20, 25, Result.OK);

        assertThat(check()).hasSize(3).anySatisfy(v -> assertThat(v).contains("not whole records: torn"))
                .anySatisfy(v -> assertThat(v).contains("n1:1 is there twice"))
                .anySatisfy(v -> assertThat(v).contains("n2:2, appended and fsync'd by n2, is missing: lost"));
    }

    @Test
    void everyAppendOnceInEachNodesOrderKeepsThePromise() throws IOException {
        op("n1", "append", Workload.LOG, "n1:1", 0, 5, Result.OK);
        op("n2", "append", Workload.LOG, "n2:2", 1, 6, Result.OK);
        op("n1", "append", Workload.LOG, "n1:3", 7, 9, Result.FAIL);
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        log.writeBytes(HistoryChecker.record("n2:2"));
        log.writeBytes(HistoryChecker.record("n1:1"));
        Files.write(dir.resolve("log-1.bin"), log.toByteArray());
        op("n3", "readlog", Workload.LOG, "log-1.bin", 20, 25, Result.OK);

        assertThat(check()).isEmpty();
    }

    @Test
    void aRegisterValueDecodesWholeOrTorn() throws IOException {
        Path file = dir.resolve("r");
        Files.createFile(file);
        Workload.writeRegister(file, "n2:17", () -> { });
        byte[] bytes = Files.readAllBytes(file);

        assertThat(Workload.decode(bytes)).isEqualTo("n2:17");
        assertThat(Workload.decode(new byte[0])).isEmpty();
        bytes[4096] = 'X';
        assertThat(Workload.decode(bytes)).isEqualTo("TORN");
    }

    @Test
    void twoExHoldersOfOneGlockAreAViolation() {
        GlockHolders holders = new GlockHolders();
        String lock = "/iomap/fs/locks/INODE-7/holders/";
        holders.apply(1, List.of(lock + "n1.1.3=EX"), List.of());
        holders.apply(2, List.of(lock + "n2.1.4=UN"), List.of());
        holders.apply(3, List.of(lock + "n2.1.4=SH"), List.of(lock + "n1.1.3=EX", lock + "n2.1.4=UN"));
        assertThat(holders.violations()).isEmpty();

        holders.apply(4, List.of(lock + "n3.1.5=EX"), List.of());

        assertThat(holders.violations()).singleElement().asString().contains("zxid 0x4: glock INODE-7 has incompatible holders");
    }

    @Test
    void aHistorySavedIsLoadedTheSame() throws IOException {
        op("n1", "write", R, "n1:1", 0, 5, Result.OK);
        history.event(new Event("fence", "n2", 7));
        history.save(dir.resolve("h.tsv"));

        History loaded = History.load(dir.resolve("h.tsv"));

        assertThat(loaded.ops()).isEqualTo(history.ops());
        assertThat(loaded.events()).isEqualTo(history.events());
    }
}
