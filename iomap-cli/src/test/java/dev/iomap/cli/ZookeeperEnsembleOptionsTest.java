package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@code iomap zookeeper}'s ensemble options refused in one line before anything starts (the ensemble
 * itself runs in {@link NbdImageCommandsTest}'s cluster test, and {@code iomap-cluster}'s tests).
 */
class ZookeeperEnsembleOptionsTest {

    @Test
    void serverIdAndServersGoTogetherAndTheIdMustBeAServer() {
        assertThat(Cli.run("zookeeper", "--server-id", "1").err())
                .isEqualTo("iomap: --server-id and --servers go together: give both, or neither\n");
        assertThat(Cli.run("zookeeper", "--servers", "1=127.0.0.1:1:2:3").err())
                .isEqualTo("iomap: --server-id and --servers go together: give both, or neither\n");
        assertThat(Cli.run("zookeeper", "--server-id", "4", "--servers", "1=127.0.0.1:1:2:3").err())
                .isEqualTo("iomap: --server-id 4 is not one of --servers 1=127.0.0.1:1:2:3\n");
        assertThat(Cli.run("zookeeper", "--server-id", "1", "--servers", "1=127.0.0.1:1:2").err())
                .startsWith("iomap: bad --servers: '1=127.0.0.1:1:2' is not ID=HOST:CLIENT:QUORUM:ELECTION");
        assertThat(Cli.run("zookeeper", "--ensemble", "--server-id", "1", "--servers", "1=127.0.0.1:1:2:3").err())
                .startsWith("iomap: --ensemble runs all three servers here; --server-id runs one");
        assertThat(Cli.run("zookeeper", "--ensemble", "--port", "65000").err())
                .startsWith("iomap: bad --port 65000 for --ensemble: first client port 65000 leaves no room");
    }
}
