package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.ClusterSpec;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NotSupportedException;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.lock.ClusterJoinProvider;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Java API's cluster mount: {@code IomapFileSystems.mount("gfs2-like", device,
 * options.withCluster(ClusterSpec.parse("zk=HOST:PORT")))} finds {@link ZkClusterJoinProvider} through
 * {@link ClusterJoinProvider}, connects a Curator client of its own per mount, joins, and closes the client
 * at unmount (the node's member znode goes with its session). Against a real ZooKeeper
 * ({@link ZkTestServer}), closed with every mount after each test.
 */
class ClusterMountOptionsTest {
    private static final int BLOCK = 4096;

    private ZkTestServer zk;
    private RamBlockDevice device;
    private final List<IomapFileSystem> mounted = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        zk = new ZkTestServer();
        device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "api", Map.of("journals", "2")));
    }

    @AfterEach
    void stop() throws IOException {
        try {
            for (int i = mounted.size() - 1; i >= 0; i--) {
                mounted.get(i).close();
            }
        } finally {
            zk.close();
        }
    }

    private IomapFileSystem node(String id) throws IOException {
        ClusterSpec spec = ClusterSpec.parse("zk=" + zk.connectString()).withNodeId(id);
        IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", device, MountOptions.defaults().withCluster(spec));
        mounted.add(fs);
        return fs;
    }

    /** @return the incarnations holding journal slots of the one filesystem on the server, by slot */
    private List<String> members() throws Exception {
        CuratorFramework client = zk.client();
        List<String> filesystems = client.getChildren().forPath("/iomap4j");
        assertThat(filesystems).hasSize(1);
        String dir = "/iomap4j/" + filesystems.getFirst() + "/members";
        List<String> ids = new ArrayList<>();
        for (String slot : client.getChildren().forPath(dir).stream().sorted().toList()) {
            ids.add(new String(client.getData().forPath(dir + "/" + slot), StandardCharsets.UTF_8));
        }
        return ids;
    }

    @Test
    void twoNodesMountedThroughMountOptionsShareFilesAndLeaveWhenClosed() throws Exception {
        IomapFileSystem a = node("node-a");
        IomapFileSystem b = node("node-b");
        assertThat(members()).containsExactly("node-a.1", "node-b.2");
        byte[] bytes = "written by a, read by b\n".getBytes(StandardCharsets.UTF_8);
        try (IomapFile file = a.create("/shared")) {
            file.write(0, ByteBuffer.wrap(bytes));
            file.fsync();
        }
        try (IomapFile file = b.open("/shared")) {
            ByteBuffer read = ByteBuffer.allocate(64);
            assertThat(file.read(0, read)).isEqualTo(bytes.length);
            assertThat(new String(read.array(), 0, bytes.length, StandardCharsets.UTF_8))
                    .isEqualTo("written by a, read by b\n");
        }
        mounted.remove(a);
        a.close();
        assertThat(members()).containsExactly("node-b.2");
        mounted.remove(b);
        b.close();
        assertThat(members()).isEmpty();
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).isEmpty();
    }

    @Test
    void aThirdNodeOfATwoJournalFilesystemIsRefusedAndItsClientClosed() throws Exception {
        node("node-a");
        node("node-b");
        assertThatThrownBy(() -> node("node-c")).isInstanceOf(JournalSlotsTakenException.class);
        assertThat(members()).containsExactly("node-a.1", "node-b.2");
        assertThat(zk.client().getChildren().forPath("/iomap4j").size()).isEqualTo(1);
    }

    @Test
    void anUnknownSchemeOrABadAddressIsRefusedBeforeAnythingIsMounted() {
        MountOptions etcd = MountOptions.defaults().withCluster(ClusterSpec.parse("etcd=127.0.0.1:2379"));
        assertThatThrownBy(() -> IomapFileSystems.mount("gfs2-like", device, etcd))
                .isInstanceOf(NotSupportedException.class)
                .hasMessage("no cluster provider for 'etcd=' on the class path (schemes: zk)");
        MountOptions bad = MountOptions.defaults().withCluster(ClusterSpec.parse("zk=localhost"));
        assertThatThrownBy(() -> IomapFileSystems.mount("gfs2-like", device, bad))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("zk=localhost is not HOST:PORT[,HOST:PORT...][/CHROOT]");
    }

    @Test
    void generatedNodeIdsAreTheHostNameAndARandomSuffix() throws NotSupportedException {
        String one = ZkClusterJoinProvider.newNodeId();
        String two = ZkClusterJoinProvider.newNodeId();
        assertThat(one).matches("[a-z0-9-]{1,40}-[a-z0-9]{8}");
        assertThat(two).isNotEqualTo(one);
        assertThat(one.substring(0, one.length() - 8)).isEqualTo(two.substring(0, two.length() - 8));
        assertThat(ClusterJoinProvider.forScheme("zk")).isInstanceOf(ZkClusterJoinProvider.class);
    }
}
