package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Each gfs2-like ZooKeeper node allocates in resource groups of its own (issue 40, closing paragraph):
 * two nodes creating files in separate directories take only their preferred group's glock, so neither
 * ever asks the other to give up a resource group, as GFS2's per-node preferred groups arrange; a node
 * whose group fills moves on to the next group, and a create that finds no room anywhere fails with
 * ENOSPC leaving the image clean.
 */
class Gfs2ZkPreferredRgrpTest {
    private static final int BLOCK = 4096;

    private ZkTestServer zk;
    private RamBlockDevice device;
    private IomapFileSystem a;
    private IomapFileSystem b;

    @BeforeEach
    void start() throws Exception {
        zk = new ZkTestServer();
    }

    private void format(long bytes, String rgBlocks) throws IOException {
        device = new RamBlockDevice(BLOCK, bytes);
        Map<String, String> options = new HashMap<>(Map.of("journals", "3"));
        if (rgBlocks != null) {
            options.put("rgblocks", rgBlocks);
        }
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "preferred", options));
    }

    private IomapFileSystem node(String id) throws Exception {
        return CoreRuntime.mount(new Gfs2LikeAdapter(new ZkClusterJoin(zk.client(), id, Duration.ofMillis(200))),
                device, new MountOptions(PageCacheOptions.defaults(), false));
    }

    @AfterEach
    void stop() throws IOException {
        try {
            if (b != null) {
                b.close();
            }
            if (a != null) {
                a.close();
            }
        } finally {
            zk.close();
        }
    }

    private static Map<String, Long> counters(IomapFileSystem fs) throws IOException {
        return new HashMap<>(fs.stats().adapterCounters());
    }

    private static long delta(Map<String, Long> before, IomapFileSystem fs, String key) throws IOException {
        return counters(fs).get(key) - before.get(key);
    }

    private static void create(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.create(path)) {
            file.fsync();
        }
    }

    @Test
    void twoNodesCreatingInSeparateDirectoriesNeverAskForEachOthersResourceGroups() throws Exception {
        format(32L << 20, null);
        a = node("A");
        b = node("B");
        a.mkdir("/a");
        b.mkdir("/b");
        // warm-up: each node's first allocation also looks for unlinked inodes in every group, once
        create(a, "/a/warm");
        create(b, "/b/warm");
        create(a, "/a/warm2");
        create(b, "/b/warm2");
        Map<String, Long> beforeA = counters(a);
        Map<String, Long> beforeB = counters(b);
        int creates = 40;
        for (int i = 0; i < creates; i++) {
            create(a, "/a/f" + i);
            create(b, "/b/f" + i);
        }
        assertThat(delta(beforeA, a, "glock.zk.demoteRequestsSent")).as("demote requests A sent").isZero();
        assertThat(delta(beforeB, b, "glock.zk.demoteRequestsSent")).as("demote requests B sent").isZero();
        assertThat(delta(beforeA, a, "glock.demotions")).as("glocks A gave up").isZero();
        assertThat(delta(beforeB, b, "glock.demotions")).as("glocks B gave up").isZero();
        assertThat(a.readdir("/a")).hasSize(creates + 2);
        assertThat(b.readdir("/b")).hasSize(creates + 2);
        assertThat(a.readdir("/b")).as("A sees B's files").hasSize(creates + 2);
        closeAndCheck();
    }

    @Test
    void aNodeWhoseGroupIsFullMovesOnAndAFullDeviceFailsCleanly() throws Exception {
        // 8 MiB in groups of 128 blocks: a node's group holds about a hundred dinodes
        format(8L << 20, "128");
        a = node("A");
        a.mkdir("/a");
        int created = 0;
        try {
            while (created < 100_000) {
                create(a, "/a/f" + created);
                created++;
            }
        } catch (NoSpaceException e) {
            // the device is full
        }
        assertThat(created).as("files created until the device was full: more than one group holds")
                .isGreaterThan(300);
        assertThatThrownBy(() -> create(a, "/a/one-more")).isInstanceOf(NoSpaceException.class);
        b = node("B");
        assertThat(b.readdir("/a")).as("B sees every file A created").hasSize(created);
        closeAndCheck();
    }

    private void closeAndCheck() throws IOException {
        if (b != null) {
            b.close();
            b = null;
        }
        a.close();
        a = null;
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).as("fsck after every node unmounted").isEmpty();
    }
}
