package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.cli.observe.MountObservation;
import dev.iomap.cli.observe.MountRuntime;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code iomap top} in a real terminal (issue 41 item 2): tmux runs it against a mount of this process
 * (found through the runtime file under the {@code XDG_RUNTIME_DIR} tmux gives it), the test reads the pane,
 * writes through the mount, reads the pane again, and quits with q and with Ctrl-C. A private tmux server
 * ({@code -L}), killed after.
 */
class TopCommandTmuxTest {
    @TempDir
    Path dir;

    private final String server = "iomap-top-test-" + UUID.randomUUID();
    private RamBlockDevice device;
    private IomapFileSystem fs;
    private MountObservation observation;
    private Path mountPoint;

    @BeforeEach
    void mount() throws IOException {
        device = new RamBlockDevice(4096, 64L << 20);
        IomapFileSystems.format("xfs-like", device, FormatOptions.blockSize(4096));
        fs = IomapFileSystems.mount("xfs-like", device, MountOptions.defaults());
        mountPoint = Files.createDirectory(dir.resolve("mnt"));
        Files.createDirectory(dir.resolve("xdg"));
        observation = MountObservation.start(fs, mountPoint, null, MountRuntime.at(dir.resolve("xdg/iomap")));
    }

    @AfterEach
    void unmount() throws Exception {
        try {
            run("tmux", "-L", server, "kill-server");
        } finally {
            try {
                observation.close();
            } finally {
                fs.close();
                device.close();
            }
        }
    }

    @Test
    void topRedrawsInPlaceAndQuitsCleanlyOnQ() throws Exception {
        startTop("q-session");
        String header = "iomap top - " + mountPoint.toRealPath();
        String first = awaitPane("q-session", pane -> pane.contains(header));
        assertThat(first).contains("app write", "cache hits", "dirty", "writeback", "folios made by order");

        try (IomapFile file = fs.create("/f")) {
            file.write(0, ByteBuffer.allocate(1 << 20));
        }
        String later = awaitPane("q-session", pane -> pane.lines().anyMatch(
                line -> line.startsWith("app write") && line.endsWith("1.0 MiB")));
        assertThat(later.lines().filter(line -> line.startsWith("iomap top - "))).as("one frame, redrawn in place")
                .hasSize(1);
        assertThat(later.lines().filter(line -> line.startsWith("dirty"))).singleElement().asString()
                .endsWith("1.0 MiB");

        run("tmux", "-L", server, "send-keys", "-t", "q-session", "q");
        String after = awaitPane("q-session", pane -> pane.contains("TOP-EXITED"));
        assertThat(after).contains("TOP-EXITED 0").doesNotContain("iomap top - ");
    }

    @Test
    void ctrlCEndsItAndRestoresTheScreen() throws Exception {
        startTop("c-session");
        awaitPane("c-session", pane -> pane.contains("iomap top - "));

        run("tmux", "-L", server, "send-keys", "-t", "c-session", "C-c");
        String after = awaitPane("c-session", pane -> pane.contains("TOP-EXITED"));
        assertThat(after).contains("TOP-EXITED 130").doesNotContain("iomap top - ");
        String modes = run("tmux", "-L", server, "display-message", "-p", "-t", "c-session",
                "#{alternate_on} #{cursor_flag}");
        assertThat(modes.strip()).as("alternate screen off, cursor shown").isEqualTo("0 1");
    }

    private void startTop(String session) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String command = java + " -cp " + System.getProperty("java.class.path") + " dev.iomap.cli.IomapCli top "
                + mountPoint + "; echo TOP-EXITED $?; sleep 60";
        run("tmux", "-L", server, "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
                "-e", "XDG_RUNTIME_DIR=" + dir.resolve("xdg"), command);
    }

    /** Reads the pane every 200 ms until {@code done} holds (60 s at most: a JVM starts under load). */
    private String awaitPane(String session, Predicate<String> done) throws Exception {
        String pane = "";
        for (long end = System.nanoTime() + 60_000_000_000L; System.nanoTime() < end; Thread.sleep(200)) {
            pane = run("tmux", "-L", server, "capture-pane", "-p", "-t", session);
            if (done.test(pane)) {
                return pane;
            }
        }
        throw new AssertionError("the pane never showed what was awaited; it shows:\n" + pane);
    }

    private static String run(String... command) throws Exception {
        Process process = new ProcessBuilder(new ArrayList<>(List.of(command))).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int status = process.waitFor();
        if (status != 0 && !command[command.length - 1].equals("kill-server")) {
            throw new AssertionError(String.join(" ", command) + " exited " + status + ": " + output);
        }
        return output;
    }
}
