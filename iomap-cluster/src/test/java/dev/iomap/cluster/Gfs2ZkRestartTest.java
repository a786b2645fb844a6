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
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 35 item 11: ZooKeeper is restarted with its data kept, so everything the nodes left in it is
 * back: their journal markers, their glocks' holder entries, and their sessions until they expire. Two
 * gfs2-like nodes die while ZooKeeper is down; when they mount again with their ids, the remounts
 * failed ({@code mark journal 0 in use: NodeExists}, {@code change b.1 on INODE:6147 from UN to SH:
 * NodeExists}) or waited the glock timeout for holders nobody would demote. Now each new incarnation
 * recovers the dead ones' journals and glocks, and both nodes see every fsync'd byte at once.
 */
class Gfs2ZkRestartTest {
    private static final int BLOCK = 4096;
    private static final MountOptions OPTIONS = new MountOptions(PageCacheOptions.defaults(), false);
    /** The dead nodes' sessions: short, so that the restarted server expires them soon. */
    private static final Duration SHORT_SESSION = Duration.ofSeconds(2);

    @Test
    @Timeout(120)
    void nodesMountAgainWithTheirIdsAfterZooKeeperRestartedWithItsData() throws Exception {
        RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "restart", Map.of("journals", "2")));
        byte[] fromA = Gfs2ZkFenceTest.pattern(1, 3 * BLOCK + 5);
        byte[] fromB = Gfs2ZkFenceTest.pattern(2, 2 * BLOCK + 9);
        List<IomapFileSystem> mounts = new ArrayList<>();
        try (ZkTestServer zk = new ZkTestServer()) {
            try {
                NodeDevice deviceA = new NodeDevice(device);
                NodeDevice deviceB = new NodeDevice(device);
                CuratorFramework clientA = zk.client(SHORT_SESSION);
                CuratorFramework clientB = zk.client(SHORT_SESSION);
                IomapFileSystem a = mount(mounts, deviceA, clientA, "a");
                IomapFileSystem b = mount(mounts, deviceB, clientB, "b");
                writeAndFsync(a, "/a", fromA);
                writeAndFsync(b, "/b", fromB);
                Gfs2ZkFenceTest.assertBytes(Gfs2ZkFenceTest.readAll(b, "/a"), fromA, "b reads a's file");
                assertThat(a.stat("/b").size()).isEqualTo(fromB.length);

                zk.stop();
                deviceA.cut();   // both machines die while ZooKeeper is down: their sessions stay in its data
                deviceB.cut();
                clientA.close();
                clientB.close();
                closeDead(a);
                closeDead(b);
                mounts.clear();
                zk.restart();
                CuratorFramework observer = zk.client();
                ZkTestServer.await("the dead sessions expired", () -> noMembers(observer));

                IomapFileSystem a2 = mount(mounts, new NodeDevice(device), zk.client(), "a");
                IomapFileSystem b2 = mount(mounts, new NodeDevice(device), zk.client(), "b");

                Gfs2ZkFenceTest.assertBytes(Gfs2ZkFenceTest.readAll(a2, "/b"), fromB, "a again reads b's file");
                Gfs2ZkFenceTest.assertBytes(Gfs2ZkFenceTest.readAll(b2, "/a"), fromA, "b again reads a's file");
                byte[] fresh = Gfs2ZkFenceTest.pattern(3, 100);
                writeAndFsync(a2, "/new", fresh);
                assertThat(b2.stat("/new").size()).isEqualTo(fresh.length);
                writeAndFsync(b2, "/b", fresh);
                Gfs2ZkFenceTest.assertBytes(Gfs2ZkFenceTest.readAll(a2, "/b"), fresh, "a reads b's new bytes");
            } finally {
                for (IomapFileSystem fs : mounts.reversed()) {
                    fs.close();
                }
            }
        }
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).as("fsck after both unmounted").isEmpty();
    }

    private static IomapFileSystem mount(List<IomapFileSystem> mounts, NodeDevice device, CuratorFramework client,
            String id) throws IOException {
        IomapFileSystem fs = CoreRuntime.mount(new Gfs2LikeAdapter(new ZkClusterJoin(client, id,
                Duration.ofMillis(200))), device, OPTIONS);
        mounts.add(fs);
        return fs;
    }

    private static void writeAndFsync(IomapFileSystem fs, String path, byte[] bytes) throws IOException {
        boolean exists = fs.readdir("/").stream().anyMatch(e -> ("/" + e.name()).equals(path));
        try (IomapFile file = exists ? fs.open(path) : fs.create(path)) {
            file.truncate(0);
            Gfs2ZkFenceTest.write(file, 0, bytes);
            file.fsync();
        }
    }

    /**
     * Closes a node whose machine died, to end its threads: its unmount fails, however it finds out
     * (fenced, its device cut, its ZooKeeper client closed).
     */
    private static void closeDead(IomapFileSystem fs) {
        try {
            fs.close();
        } catch (IOException | RuntimeException expected) {
            // it writes nothing more
        }
    }

    private static boolean noMembers(CuratorFramework observer) {
        try {
            return observer.getChildren().forPath("/iomap4j").stream().allMatch(fs -> {
                try {
                    String members = "/iomap4j/" + fs + "/members";
                    return observer.checkExists().forPath(members) == null
                            || observer.getChildren().forPath(members).isEmpty();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        } catch (Exception e) {
            return false;
        }
    }
}
