package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ProgramFenceAgent}: options on standard input, exit status 0 or a typed failure; and the zk spec's option. */
class FenceAgentTest {
    @TempDir
    Path dir;

    private Path script(String body) throws IOException {
        Path script = dir.resolve("agent.sh");
        Files.writeString(script, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }

    @Test
    void theAgentGetsItsOptionsOnStandardInput() throws Exception {
        Path seen = dir.resolve("seen");
        ProgramFenceAgent.of(script("cat > " + seen)).fence(new Incarnation("n1", 4));
        assertThat(Files.readString(seen)).isEqualTo("action=off\nplug=n1\nincarnation=n1.4\n");
    }

    @Test
    void anAgentThatExitsNonZeroFailsWithItsOutput() throws Exception {
        ProgramFenceAgent agent = ProgramFenceAgent.of(script("echo 'no such plug'; exit 3"));
        assertThatThrownBy(() -> agent.fence(new Incarnation("n2", 1))).isInstanceOf(IOException.class)
                .hasMessageContaining("failed to fence n2.1 (exit status 3)").hasMessageContaining("no such plug");
    }

    @Test
    void anAgentThatDoesNotEndInTimeIsKilledAndFails() throws Exception {
        ProgramFenceAgent agent = new ProgramFenceAgent(script("exec sleep 30"), Duration.ofMillis(300));
        long start = System.nanoTime();
        assertThatThrownBy(() -> agent.fence(new Incarnation("n3", 2))).isInstanceOf(IOException.class)
                .hasMessageContaining("did not fence n3.2 within");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void theZkSpecNamesTheAgentAfterAQuestionMark() {
        assertThat(ZkClusterJoinProvider.fenceAgent("fence=/usr/local/bin/fence-switch"))
                .isEqualTo(ProgramFenceAgent.of(Path.of("/usr/local/bin/fence-switch")));
        assertThatThrownBy(() -> ZkClusterJoinProvider.fenceAgent("fence=relative/agent"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("absolute path");
        assertThatThrownBy(() -> ZkClusterJoinProvider.fenceAgent("session=5"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("the only option is fence=PROGRAM");
    }
}
