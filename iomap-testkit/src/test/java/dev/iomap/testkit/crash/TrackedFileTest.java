package dev.iomap.testkit.crash;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What a crash may leave of a file, according to the model. */
class TrackedFileTest {

    private static byte[] bytes(int length, int value) {
        byte[] out = new byte[length];
        java.util.Arrays.fill(out, (byte) value);
        return out;
    }

    @Test
    void durableBytesMustBeThereExactly() {
        TrackedFile file = new TrackedFile(0, "f");
        file.wrote(0, bytes(100, 7));
        file.allDurable();
        assertThat(file.check(bytes(100, 7))).isNull();
        assertThat(file.check(bytes(99, 7))).contains("size 99");
        byte[] damaged = bytes(100, 7);
        damaged[50] = 0;
        assertThat(file.check(damaged)).contains("byte at 50").contains("not changed since the last fsync");
    }

    @Test
    void changedBytesMayBeOldNewOrZeroButNothingElse() {
        TrackedFile file = new TrackedFile(0, "f");
        file.wrote(0, bytes(100, 7));
        file.allDurable();
        file.wrote(10, bytes(10, 8));
        file.zeroed(40, 10, true);
        byte[] state = bytes(100, 7);
        state[10] = 8;
        state[11] = 0;
        state[45] = 0;
        assertThat(file.check(state)).isNull();
        state[12] = 9;
        assertThat(file.check(state)).contains("byte at 12");
    }

    @Test
    void sizesBetweenTheDurableAndTheLatestAreAcceptedAndGapsMustBeZero() {
        TrackedFile file = new TrackedFile(0, "f");
        file.wrote(0, bytes(100, 7));
        file.dataDurable();
        file.wrote(200, bytes(100, 8));
        byte[] grown = new byte[300];
        System.arraycopy(bytes(100, 7), 0, grown, 0, 100);
        assertThat(file.check(java.util.Arrays.copyOf(grown, 150))).isNull();
        grown[150] = 5;
        assertThat(file.check(grown)).contains("byte at 150");
        assertThat(file.check(new byte[301])).contains("outside [100, 300]");
    }

    @Test
    void namesAreCertainOnlyAfterAnFsyncWithNoRenameSince() {
        TrackedFile file = new TrackedFile(0, "a");
        assertThat(file.mustExist()).isFalse();
        file.allDurable();
        assertThat(file.mustExist()).isTrue();
        file.renamed("b");
        assertThat(file.mustExist()).isFalse();
        assertThat(file.candidateNames()).containsExactly("a", "b");
        file.dataDurable();
        assertThat(file.mustExist()).isFalse();
        file.allDurable();
        assertThat(file.candidateNames()).containsExactly("b");
    }
}
