package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Journaled data is bounded by the journal, not by the heap (issue 35, item 17): a JVM with a 48 MiB heap
 * writes 160 MiB of data through a {@code data=journal} mount whose journal is 7 MiB, and finishes with a
 * clean image. The adapter kept the newest bytes of every journaled block it ever logged, so the heap had
 * to hold all the file data written.
 */
class JdataHeapTest {
    /** MiB written; {@code -Djdata.heap.mib=N} runs more. */
    private static final String MIB = System.getProperty("jdata.heap.mib", "160");

    @Test
    void aSmallHeapWritesManyTimesItsSizeOfJournaledData() throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process child = new ProcessBuilder(java, "-Xmx48m", "-XX:+UseSerialGC", "-XX:MaxDirectMemorySize=1g",
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
                "-cp", System.getProperty("java.class.path"), JdataHeapMain.class.getName(), MIB)
                .redirectErrorStream(true).start();
        try {
            assertThat(child.waitFor(3, TimeUnit.MINUTES)).as("the child finished").isTrue();
            String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(child.exitValue()).as(out).isZero();
            assertThat(out.strip()).isEqualTo("clean");
        } finally {
            child.destroyForcibly();
        }
    }
}
