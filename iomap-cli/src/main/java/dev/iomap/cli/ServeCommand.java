package dev.iomap.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code iomap serve DIR}: runs the mount server ({@link MountServer}) in the foreground until SIGTERM or
 * Ctrl-C, which unmount every mount it serves and leave their images clean.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Runs a mount server in DIR, in the foreground: with IOMAP_SERVER=DIR set, bin/iomap hands"
                + " mount (without -f), mkfs, fsck, stat and adapters to it instead of starting a JVM each, and a"
                + " mount stays in the server until unmounted. Many mounts and remounts (a test suite's) then cost"
                + " no JVM start each and run on code already compiled.",
                "Relative paths are the client's. A served mount's messages, and what the server runs, go to the"
                + " server's standard error (--log of mount does not apply).",
                "SIGTERM or Ctrl-C stops it: each mount it serves is unmounted, written back and left clean."
                + " DIR is made mode 700: whoever can write to it runs commands as the server's user."})
final class ServeCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "DIR", description = "the server's directory (made if missing)")
    private Path dir;

    @Override
    public Integer call() throws Exception {
        MountServer server = MountServer.open(dir, System.err);
        Path pid = server.dir().resolve(MountServer.PID);
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("iomap-serve-stop").unstarted(() -> {
            try {
                Files.deleteIfExists(pid);
            } catch (IOException e) {
                System.err.println("iomap serve: could not remove " + pid + ": " + e.getMessage());
            }
        }));
        server.serve();
        return 0;
    }
}
