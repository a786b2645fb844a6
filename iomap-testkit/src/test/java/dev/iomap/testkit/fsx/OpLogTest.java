package dev.iomap.testkit.fsx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class OpLogTest {

    @Test
    void everyOpSurvivesTheTextForm() {
        List<Op> ops = List.of(new Op.Read(1, 2), new Op.MapRead(3, 4), new Op.SeekData(28), new Op.SeekHole(29),
                new Op.Write(5, 6, 7),
                new Op.MapWrite(8, 9, 10), new Op.Truncate(11), new Op.Fallocate(12, 13, true),
                new Op.Fallocate(14, 15, false), new Op.PunchHole(16, 17), new Op.ZeroRange(18, 19, true),
                new Op.ZeroRange(20, 21, false), new Op.Clone(22, 23, 24), new Op.Copy(25, 26, 27), new Op.Fsync(),
                new Op.Fdatasync(), new Op.Sync(), new Op.DropCache(), new Op.Remount(), new Op.Check());
        String text = OpLog.format(List.of("header", "more"), ops);
        assertThat(text).startsWith("# header\n# more\nread 1 2\n");
        assertThat(OpLog.parse(text)).isEqualTo(ops);
    }

    @Test
    void commentsAndBlankLinesAreIgnoredAndBadLinesNamed() {
        assertThat(OpLog.parse("\n# c\nwrite 0 10 1   # trailing\n\nfsync\n"))
                .containsExactly(new Op.Write(0, 10, 1), new Op.Fsync());
        assertThatThrownBy(() -> OpLog.parse("fsync\nfly 1 2\n")).hasMessageContaining("line 2")
                .hasMessageContaining("unknown op 'fly'");
        assertThatThrownBy(() -> OpLog.parse("write 1\n")).hasMessageContaining("line 1");
        assertThatThrownBy(() -> OpLog.parse("zero 1 2 sometimes\n")).hasMessageContaining("keep or extend");
    }

    @Test
    void theModelZeroesWhatTruncateCutsAndReadsStopAtEof() {
        FileModel model = new FileModel();
        model.write(10, new byte[] {1, 2, 3});
        assertThat(model.size()).isEqualTo(13);
        model.truncate(11);
        model.truncate(20);
        assertThat(model.bytes(10, 4)).containsExactly(1, 0, 0, 0);
        assertThat(model.read(18, 10)).hasSize(2);
        model.zero(0, 100);
        assertThat(model.size()).isEqualTo(20);
        assertThat(model.read(0, 20)).containsOnly(0);
    }

    @Test
    void theModelKnowsWhichBlocksCertainlyHoldData() {
        FileModel model = new FileModel();
        model.write(5000, new byte[] {1});
        model.write(100, new byte[] {1, 2});
        assertThat(model.isDataBlock(0, 1024)).isTrue();
        assertThat(model.isDataBlock(1024, 1024)).isFalse();
        assertThat(model.nextData(0, 1024)).isZero();
        assertThat(model.nextData(1500, 1024)).isEqualTo(4096);
        assertThat(model.nextData(5001, 1024)).isEqualTo(5001);
        model.truncate(4500);
        assertThat(model.nextData(1024, 1024)).as("cut by truncate").isEqualTo(-1);
        model.truncate(8192);
        assertThat(model.nextData(1024, 1024)).as("truncate up adds none").isEqualTo(-1);
        model.clone(0, 6144, 1024);
        assertThat(model.nextData(1024, 1024)).as("a clone of written bytes").isEqualTo(6144);
        model.clone(2048, 6144, 1024);
        assertThat(model.isDataBlock(6144, 1024)).as("a clone of a hole").isFalse();
        model.forgetData(0, 1024);
        assertThat(model.nextData(0, 1024)).isEqualTo(-1);
        assertThat(model.read(100, 2)).as("forgetting data keeps the bytes").containsExactly(1, 2);
        model.load(new byte[] {7, 7});
        assertThat(model.size()).isEqualTo(2);
        assertThat(model.isDataBlock(0, 1024)).as("a loaded file may be holes").isFalse();
    }
}
