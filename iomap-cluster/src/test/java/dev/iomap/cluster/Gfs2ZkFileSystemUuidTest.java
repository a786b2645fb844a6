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
 * Issue 35 item 12: the cluster's znodes were keyed by what the superblock says of a filesystem (its
 * label, size and journal count), so two images formatted alike shared one namespace: a node of one
 * was refused because nodes of the other held the journal slots, and glocks of one image's inodes
 * locked the other's. Now they are keyed by the filesystem's UUID, written at mkfs.
 */
class Gfs2ZkFileSystemUuidTest {
    private static final int BLOCK = 4096;
    private static final MountOptions OPTIONS = new MountOptions(PageCacheOptions.defaults(), false);

    @Test
    @Timeout(60)
    void twoImagesFormattedAlikeAreTwoClustersOnOneZooKeeper() throws Exception {
        List<IomapFileSystem> mounts = new ArrayList<>();
        try (ZkTestServer zk = new ZkTestServer()) {
            try {
                RamBlockDevice first = formatted();
                RamBlockDevice second = formatted();
                IomapFileSystem one = mount(mounts, first, zk.client(), "n1");
                IomapFileSystem two = mount(mounts, second, zk.client(), "n2");
                write(one, "/one");
                write(two, "/two");

                assertThat(names(one)).containsExactly("one");
                assertThat(names(two)).containsExactly("two");
                CuratorFramework observer = zk.client();
                assertThat(observer.getChildren().forPath("/iomap4j")).containsExactlyInAnyOrder(
                        one.uuid().orElseThrow().toString(), two.uuid().orElseThrow().toString());
            } finally {
                for (IomapFileSystem fs : mounts.reversed()) {
                    fs.close();
                }
            }
        }
    }

    /** One journal each: the second image's node is refused if the first image's node holds it. */
    private static RamBlockDevice formatted() throws IOException {
        RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "alike", Map.of("journals", "1")));
        return device;
    }

    private static IomapFileSystem mount(List<IomapFileSystem> mounts, RamBlockDevice device,
            CuratorFramework client, String id) throws IOException {
        IomapFileSystem fs = CoreRuntime.mount(new Gfs2LikeAdapter(new ZkClusterJoin(client, id,
                Duration.ofMillis(200))), device, OPTIONS);
        mounts.add(fs);
        return fs;
    }

    private static void write(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.create(path)) {
            Gfs2ZkFenceTest.write(file, 0, Gfs2ZkFenceTest.pattern(5, 100));
            file.fsync();
        }
    }

    private static List<String> names(IomapFileSystem fs) throws IOException {
        return fs.readdir("/").stream().map(e -> e.name()).filter(n -> !n.equals(".") && !n.equals("..")).toList();
    }
}
