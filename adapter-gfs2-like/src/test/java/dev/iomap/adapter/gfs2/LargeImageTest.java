package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A large sparse image in a small heap (issue 36, item 9): a JVM with a 64 MiB heap formats a 256 GiB
 * image file, mounts it (which runs fsck's checks), writes a file, remounts, reads it back and runs
 * fsck. fsck (and so every mount, and {@code iomap mkfs}, which mounts to report the space) kept one
 * {@code long} per block of the image: 512 MiB here, 2 GiB for the 1 TiB of the report. The image file
 * is deleted with the directory (about 24 MiB of it are written: the resource groups' bitmaps).
 */
class LargeImageTest {
    private static final long BYTES = 256L << 30;

    @TempDir
    Path dir;

    @Test
    void aQuarterTebibyteImageFormatsMountsAndChecksInA64MibHeap() throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Path image = dir.resolve("large.img");
        Process child = new ProcessBuilder(java, "-Xmx64m", "-XX:+UseSerialGC", "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-cp", System.getProperty("java.class.path"),
                LargeImageMain.class.getName(), image.toString(), Long.toString(BYTES))
                .redirectErrorStream(true).start();
        try {
            assertThat(child.waitFor(3, TimeUnit.MINUTES)).as("the child finished").isTrue();
            String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(child.exitValue()).as(out).isZero();
            assertThat(out.lines().toList()).hasSize(2).last().isEqualTo("clean");
            assertThat(out.lines().findFirst().orElseThrow()).startsWith((BYTES / 4096) + " blocks, ");
        } finally {
            child.destroyForcibly();
        }
    }
}
