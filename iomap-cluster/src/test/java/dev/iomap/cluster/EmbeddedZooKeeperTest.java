package dev.iomap.cluster;

import dev.iomap.devices.LoopbackPorts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded server serves Curator on 127.0.0.1, keeps its data where told, and stops. */
class EmbeddedZooKeeperTest {

    @Test
    void servesAClientOnLoopbackAndStopsCleanly(@TempDir Path dir) throws Exception {
        int port = LoopbackPorts.reserve();
        try (EmbeddedZooKeeper zookeeper = EmbeddedZooKeeper.start(dir, port)) {
            assertThat(zookeeper.connectString()).isEqualTo("127.0.0.1:" + port);
            try (CuratorFramework client = CuratorFrameworkFactory.newClient(zookeeper.connectString(),
                    new RetryOneTime(100))) {
                client.start();
                assertThat(client.blockUntilConnected(20, TimeUnit.SECONDS)).isTrue();
                byte[] hello = "hello".getBytes(StandardCharsets.UTF_8);
                client.create().creatingParentsIfNeeded().forPath("/iomap4j/probe", hello);
                assertThat(client.getData().forPath("/iomap4j/probe")).isEqualTo(hello);
            }
            assertThat(Files.exists(dir.resolve("data"))).isTrue();
        }
        try (Socket socket = new Socket()) {
            InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
            assertThatThrownBy(() -> socket.connect(address, 1000))
                    .as("the port is closed after close()").isInstanceOf(IOException.class);
        }
    }

    @Test
    void refusesAPortOutOfRange(@TempDir Path dir) {
        assertThatThrownBy(() -> EmbeddedZooKeeper.start(dir, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("client port 0 is not 1 to 65535");
    }

}
