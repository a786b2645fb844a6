package dev.iomap.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.spi.lock.ClusterJoinProvider;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link ClusterSpec} and {@link MountOptions#cluster()}: parsing, validation, and options keeping it. */
class ClusterSpecTest {

    @Test
    void parsesSchemeAndAddressAndTakesANodeId() {
        ClusterSpec spec = ClusterSpec.parse("zk=10.0.0.1:2181,10.0.0.2:2181/iomap");
        assertThat(spec.scheme()).isEqualTo("zk");
        assertThat(spec.address()).isEqualTo("10.0.0.1:2181,10.0.0.2:2181/iomap");
        assertThat(spec.nodeId()).isEmpty();
        assertThat(spec.withNodeId("host-1_a").nodeId()).contains("host-1_a");
        assertThat(spec.withNodeId("n2")).hasToString("zk=10.0.0.1:2181,10.0.0.2:2181/iomap (node n2)");
        assertThat(spec).hasToString("zk=10.0.0.1:2181,10.0.0.2:2181/iomap");
    }

    @Test
    void refusesWhatIsNotSchemeEqualsAddressOrABadNodeId() {
        assertThatThrownBy(() -> ClusterSpec.parse("127.0.0.1:2181"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cluster '127.0.0.1:2181' is not SCHEME=ADDRESS, e.g. zk=HOST:PORT[,HOST:PORT]");
        assertThatThrownBy(() -> ClusterSpec.parse("zk="))
                .hasMessage("cluster address '' must be non-empty, without spaces");
        assertThatThrownBy(() -> ClusterSpec.parse("z k=a:1"))
                .hasMessage("cluster scheme 'z k' must be letters and digits, e.g. zk");
        assertThatThrownBy(() -> ClusterSpec.parse("zk=a:1").withNodeId("a/b"))
                .hasMessage("node id 'a/b' must be 1 to 128 letters, digits, '-' or '_'");
        assertThatThrownBy(() -> new ClusterSpec("zk", "a:1", Optional.of("x".repeat(129))))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void mountOptionsKeepTheClusterAcrossAdapterOptionsAndDefaultToNone() {
        assertThat(MountOptions.defaults().cluster()).isEmpty();
        ClusterSpec spec = ClusterSpec.parse("zk=127.0.0.1:2181");
        MountOptions options = MountOptions.defaults().withCluster(spec).withAdapterOptions(Map.of("data", "journal"));
        assertThat(options.cluster()).contains(spec);
        assertThat(options.adapterOptions()).containsExactly(Map.entry("data", "journal"));
    }

    @Test
    void aSchemeWithoutAProviderIsRefusedNamingWhatToAdd() {
        assertThatThrownBy(() -> ClusterJoinProvider.forScheme("zk"))
                .isInstanceOf(NotSupportedException.class)
                .hasMessage("no cluster provider for 'zk=' on the class path (none: add iomap-cluster for zk=)");
    }
}
