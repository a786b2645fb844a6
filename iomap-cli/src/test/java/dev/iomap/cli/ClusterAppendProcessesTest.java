package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code O_APPEND} through two cluster nodes' FUSE mounts of one image (issue 35, item 7): the kernel
 * of each mount computes an append's offset from the size it cached, which the other node's appends
 * made stale, so the mount must write an {@code O_APPEND} open's bytes at the end of the file as the
 * filesystem knows it under the inode glock, not at the offset the kernel sent. Real processes: {@code
 * iomap zookeeper} and two {@code iomap mount --cluster}, driven by a shell as a user would.
 */
@Timeout(150)
class ClusterAppendProcessesTest {
    @TempDir
    Path dir;

    @Test
    void appendsThroughTwoNodesAlternateAndAllSurvive() throws Exception {
        assumeTrue(ClusterProcesses.fuseAvailable(), "FUSE end-to-end test skipped: no /dev/fuse or fusermount3");
        try (ClusterProcesses cluster = new ClusterProcesses(dir)) {
            cluster.startZooKeeper();
            Path image = dir.resolve("shared.img");
            Cli mkfs = Cli.run("mkfs", "--adapter=gfs2-like", "-o", "journals=2", "--size=32m", image.toString());
            assertThat(mkfs.status()).as(mkfs.err()).isZero();
            cluster.mountNode(image, "a");
            cluster.mountNode(image, "b");

            String both = cluster.bash("exec 3>>a/r; exec 4>>b/r; echo A1 >&3; echo B1 >&4; echo A2 >&3; echo B2 >&4;"
                    + " exec 3>&- 4>&-; cat a/r; echo --; cat b/r");
            assertThat(both).isEqualTo("A1\nB1\nA2\nB2\n--\nA1\nB1\nA2\nB2\n");

            String many = cluster.bash("exec 3>>a/s; exec 4>>b/s; for i in $(seq 1 40); do echo a$i >&3; echo b$i >&4;"
                    + " done; exec 3>&- 4>&-; wc -l < a/s; head -c 12 b/s; tail -n 1 b/s");
            assertThat(many).isEqualTo("80\na1\nb1\na2\nb2\nb40\n");

            cluster.unmountAll();
            Cli fsck = Cli.run("fsck", image.toString());
            assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        }
    }
}
