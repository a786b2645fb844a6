package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 35 item 14: the recovery of a dead node's journal was silent. Now the recovering node logs
 * one line (which journal, whose, how many transactions it replayed, how long it took), as GFS2 does
 * in dmesg, and counts it in its mount's counters.
 */
class Gfs2ZkRecoveryReportTest {
    private static final int BLOCK = 4096;
    private static final MountOptions OPTIONS = new MountOptions(PageCacheOptions.defaults(), false);
    private static final Logger LOG = Logger.getLogger("dev.iomap.cluster.ClusterRecovery");

    private final List<LogRecord> records = Collections.synchronizedList(new ArrayList<>());
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void captureLog() {
        LOG.addHandler(capture);
    }

    @AfterEach
    void stopCapturing() {
        LOG.removeHandler(capture);
    }

    @Test
    @Timeout(60)
    void theSurvivorLogsOneLineAndCountsTheJournalItRecovered() throws Exception {
        RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "report", Map.of("journals", "2")));
        List<IomapFileSystem> mounts = new ArrayList<>();
        try (ZkTestServer zk = new ZkTestServer()) {
            try {
                NodeDevice deviceA = new NodeDevice(device);
                CuratorFramework clientA = zk.client();
                IomapFileSystem a = mount(mounts, deviceA, clientA, "a");
                IomapFileSystem b = mount(mounts, new NodeDevice(device), zk.client(), "b");
                byte[] bytes = Gfs2ZkFenceTest.pattern(4, 5000);
                for (String name : List.of("/x", "/y", "/z")) {
                    try (IomapFile file = a.create(name)) {
                        Gfs2ZkFenceTest.write(file, 0, bytes);
                        file.fsync();
                    }
                }
                long committed = a.stats().adapterCounters().get("journal.commits");

                deviceA.cut();
                zk.killSession(clientA);
                clientA.close();
                ZkTestServer.await("b logs the recovery", () -> !records.isEmpty());

                assertThat(records).hasSize(1);
                LogRecord line = records.get(0);
                assertThat(line.getLevel()).isEqualTo(Level.INFO);
                assertThat(line.getMessage()).matches("node b\\.2 recovered journal 0 of dead node a\\.1: "
                        + committed + " transactions replayed in \\d+ ms");
                Map<String, Long> counters = b.stats().adapterCounters();
                assertThat(counters).containsEntry("cluster.recovery.journals", 1L)
                        .containsEntry("cluster.recovery.transactions", committed)
                        .containsKey("cluster.recovery.millis");
                for (String name : List.of("/x", "/y", "/z")) {
                    Gfs2ZkFenceTest.assertBytes(Gfs2ZkFenceTest.readAll(b, name), bytes, "b reads " + name);
                }
                mounts.remove(a);
                try {
                    a.close();
                } catch (IOException expected) {
                    // fenced: its unmount writes nothing
                }
            } finally {
                closeAll(mounts);
            }
        }
    }

    /**
     * Closes the mounts, last first; the first one's node died (its device cut, its ZooKeeper client
     * closed): its unmount fails, however it finds out.
     */
    private static void closeAll(List<IomapFileSystem> mounts) throws IOException {
        for (int i = mounts.size() - 1; i >= 0; i--) {
            try {
                mounts.get(i).close();
            } catch (IOException | RuntimeException e) {
                if (i != 0) {
                    throw e;
                }
            }
        }
    }

    private static IomapFileSystem mount(List<IomapFileSystem> mounts, dev.iomap.device.BlockDevice device,
            CuratorFramework client, String id) throws IOException {
        IomapFileSystem fs = CoreRuntime.mount(new Gfs2LikeAdapter(new ZkClusterJoin(client, id,
                Duration.ofMillis(200))), device, OPTIONS);
        mounts.add(fs);
        return fs;
    }
}
