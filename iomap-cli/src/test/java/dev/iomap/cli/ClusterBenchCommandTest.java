package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code iomap cluster-bench} end to end on its embedded ZooKeeper: five rows in order, no ZooKeeper
 * round trip on a node's own files after the warm-up, exactly one grant per ping-pong handoff, and the
 * image it made is gone afterwards.
 */
class ClusterBenchCommandTest {

    @Test
    void printsTheFiveRowsAndLeavesNoImageBehind(@TempDir Path dir) throws IOException {
        Cli bench = Cli.run("cluster-bench", "--ops=5", "--dir=" + dir);

        assertThat(bench.status()).as(bench.err()).isZero();
        List<String[]> rows = bench.out().lines().skip(2).map(line -> line.trim().split("\\s+")).toList();
        assertThat(rows).extracting(row -> row[0] + "/" + row[1]).containsExactly("own-files/3", "ping-pong/2",
                "independent/1", "independent/2", "independent/3");
        assertThat(rows.get(0)[4]).as("requests per op on own files").isEqualTo("0.00");
        assertThat(rows.get(1)[5]).as("grants per ping-pong handoff").isEqualTo("1.000");
        assertThat(Arrays.stream(rows.get(1))).hasSize(8);
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left).as("files left in --dir").isEmpty();
        }
    }

    @Test
    void badOpsIsOneLine() {
        Cli bench = Cli.run("cluster-bench", "--ops=0");
        assertThat(bench.status()).isEqualTo(1);
        assertThat(bench.err()).isEqualTo("iomap: bad --ops 0: give 1 or more\n");
    }
}
