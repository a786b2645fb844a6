package dev.iomap.cluster;

import dev.iomap.devices.LoopbackPorts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.RetryPolicy;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three ZooKeeper servers in this JVM on 127.0.0.1, three ports each: one serves clients the whole
 * ensemble's data, the loss of one changes nothing for a client, the loss of two stops it until one
 * comes back, and nothing written before is lost. The ensemble is closed after each test.
 */
@Timeout(180)
class ZooKeeperEnsembleTest {
    @TempDir
    Path dir;

    /**
     * A create that fails for want of a connection ({@code ConnectionLoss}) has an unknown outcome in
     * ZooKeeper: the last server may have logged it as leader before it saw its quorum go, and then wins
     * the election once a peer is back and commits it. So the create made without a quorum must fail,
     * and may or may not be there afterwards (whole if it is); what was written before must be. Requests
     * with a quorum retry until it serves (an election takes a few ticks, longer on loaded cores), and
     * their creates are idempotent, since a retried create may find its own first try done.
     */
    @Test
    void aClientKeepsItsDataAcrossTheLossOfOneServerAndWaitsOutTheLossOfTwo() throws Exception {
        try (ZooKeeperEnsemble ensemble = ZooKeeperEnsemble.start(dir, freeServers());
                CuratorFramework client = client(ensemble.connectString())) {
            assertThat(ensemble.servers()).extracting(EnsembleServer::id).containsExactly(1, 2, 3);
            assertThat(List.of(ensemble.role(1), ensemble.role(2), ensemble.role(3)))
                    .containsExactlyInAnyOrder("leading", "following", "following");
            client.create().orSetData().forPath("/before", bytes("before"));

            int leader = leader(ensemble);
            ensemble.stop(leader);
            client.create().orSetData().forPath("/one-down", bytes("one down"));
            assertThat(client.getData().forPath("/before")).isEqualTo(bytes("before"));

            int other = ensemble.servers().stream().mapToInt(EnsembleServer::id)
                    .filter(id -> id != leader).findFirst().orElseThrow();
            ensemble.stop(other);
            client.getZookeeperClient().setRetryPolicy(new RetryOneTime(500));
            assertThatThrownBy(() -> client.create().forPath("/no-quorum", bytes("lost")))
                    .as("no write without a quorum").isInstanceOf(KeeperException.class);
            client.getZookeeperClient().setRetryPolicy(untilServed());

            ensemble.restart(other);
            ensemble.awaitQuorum(ZooKeeperEnsemble.START_TIMEOUT);
            assertThat(client.blockUntilConnected(60, TimeUnit.SECONDS)).isTrue();
            assertThat(client.getData().forPath("/before")).isEqualTo(bytes("before"));
            assertThat(client.getData().forPath("/one-down")).isEqualTo(bytes("one down"));
            if (client.checkExists().forPath("/no-quorum") != null) {
                assertThat(client.getData().forPath("/no-quorum")).as("the failed create, committed later")
                        .isEqualTo(bytes("lost"));
            }
        }
    }

    @Test
    void aMemberStartedAloneServesOnlyWithAMajority() throws Exception {
        List<EnsembleServer> servers = freeServers();
        try (EmbeddedZooKeeper one = EmbeddedZooKeeper.startMember(dir.resolve("one"), 1, servers)) {
            assertThat(one.connectString()).isEqualTo(servers.get(0).clientAddress());
            try (EmbeddedZooKeeper two = EmbeddedZooKeeper.startMember(dir.resolve("two"), 2, servers);
                    CuratorFramework client = client(EnsembleServer.connectString(servers))) {
                assertThat(two.connectString()).isEqualTo(servers.get(1).clientAddress());
                client.create().forPath("/two-of-three", bytes("quorum"));
                assertThat(client.getData().forPath("/two-of-three")).isEqualTo(bytes("quorum"));
            }
        }
    }

    @Test
    void serversAreWrittenAndParsedAsIdHostAndThreePorts() {
        List<EnsembleServer> servers = EnsembleServer.onLoopback(2181);
        assertThat(servers).extracting(EnsembleServer::toString).containsExactly(
                "1=127.0.0.1:2181:2888:3888", "2=127.0.0.1:2182:2889:3889", "3=127.0.0.1:2183:2890:3890");
        assertThat(EnsembleServer.parseList(String.join(",", servers.stream().map(Object::toString).toList())))
                .isEqualTo(servers);
        assertThat(EnsembleServer.connectString(servers)).isEqualTo("127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183");
        assertThatThrownBy(() -> EnsembleServer.parseList("1=h:1:2")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not ID=HOST:CLIENT:QUORUM:ELECTION");
        assertThatThrownBy(() -> EnsembleServer.parseList("1=h:1:2:3,1=g:4:5:6"))
                .hasMessage("server id 1 is given twice");
        assertThatThrownBy(() -> EnsembleServer.parseList("1=h:1:1:3"))
                .hasMessageContaining("needs three different ports");
    }

    /** @return the leader's id */
    static int leader(ZooKeeperEnsemble ensemble) {
        return ensemble.servers().stream().mapToInt(EnsembleServer::id)
                .filter(id -> ensemble.role(id).equals("leading")).findFirst().orElseThrow();
    }

    /**
     * @return three servers on 127.0.0.1, on nine different ports free a moment ago, below the ephemeral
     *     range so that a server stopped by a test can bind its ports again ({@link LoopbackPorts})
     */
    static List<EnsembleServer> freeServers() throws IOException {
        var ports = new java.util.LinkedHashSet<Integer>();
        while (ports.size() < 9) {
            ports.add(LoopbackPorts.reserve());
        }
        List<Integer> list = new ArrayList<>(ports);
        List<EnsembleServer> servers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            servers.add(new EnsembleServer(i + 1, "127.0.0.1", list.get(3 * i), list.get(3 * i + 1),
                    list.get(3 * i + 2)));
        }
        return servers;
    }

    private static CuratorFramework client(String connectString) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(connectString)
                .sessionTimeoutMs((int) Duration.ofSeconds(10).toMillis()).connectionTimeoutMs(3000)
                .retryPolicy(untilServed()).build();
        client.start();
        if (!client.blockUntilConnected(60, TimeUnit.SECONDS)) {
            client.close();
            throw new IllegalStateException("no connection to " + connectString);
        }
        return client;
    }

    /** @return retries every 500 ms for 30 s: until an ensemble that has a quorum elected its leader */
    private static RetryPolicy untilServed() {
        return new RetryUntilElapsed(30_000, 500);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
