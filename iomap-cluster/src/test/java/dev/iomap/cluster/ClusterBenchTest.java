package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.FileBlockDevice;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ClusterBench} on a file device and a test ZooKeeper, short ({@code -Dcluster.bench.ops}, default
 * 200 per node and scenario): the exact costs it measures (no request per operation on a node's own files
 * after warm-up, one grant and 12 requests per ping-pong handoff), and its table printed.
 */
class ClusterBenchTest {
    @Test
    @Timeout(300)
    void measuresRequestsPerOperationHandoffsAndThroughput(@TempDir Path dir) throws Exception {
        int ops = Integer.getInteger("cluster.bench.ops", 200);
        try (ZkTestServer zk = new ZkTestServer();
                FileBlockDevice device = FileBlockDevice.open(dir.resolve("image"), 4096, 64L << 20, false)) {
            new Gfs2LikeAdapter().format(device, new FormatOptions(4096, "bench", Map.of("journals", "3")));
            MountOptions options = new MountOptions(PageCacheOptions.defaults(), false);
            List<ClusterBench.Row> rows = new ClusterBench(zk.connectString(),
                    (join, shared) -> CoreRuntime.mount(new Gfs2LikeAdapter(join), shared, options), device, ops).run();
            System.out.print(ClusterBench.table(rows));

            assertThat(rows.stream().map(r -> r.scenario() + "/" + r.nodes()).toList()).containsExactly(
                    "own-files/3", "ping-pong/2", "independent/1", "independent/2", "independent/3");
            assertThat(rows.get(0).ops()).isEqualTo(3L * ops);
            assertThat(rows.get(0).requestsPerOp()).as("own files: requests per op").isZero();
            assertThat(rows.get(0).grantsPerOp()).as("own files: grants per op").isZero();
            assertThat(rows.get(1).grantsPerOp()).as("ping-pong: grants per handoff").isEqualTo(1.0);
            assertThat(rows.get(1).requestsPerOp()).as("ping-pong: requests per handoff").isEqualTo(12.0);
            for (ClusterBench.Row row : rows.subList(2, 5)) {
                assertThat(row.requestsPerOp()).as(row.nodes() + " independent nodes: requests per op").isZero();
                assertThat(row.opsPerSecond()).isPositive();
            }
        }
        assertThat(dir.resolve("image")).exists();
    }
}
