package dev.iomap.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the tests that run bin/iomap and the mount helper as processes share: the checkout, the mount table. */
final class ProcessMounts {
    private ProcessMounts() {
    }

    /** @return the checkout: bin/ beside this module */
    static Path checkout() {
        return Path.of("").toAbsolutePath().getParent();
    }

    /** @return the line of /proc/self/mountinfo for {@code mountPoint}, or null if it is not mounted */
    static String line(Path mountPoint) throws IOException {
        String target = " " + mountPoint + " ";
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().filter(line -> line.contains(target))
                .findFirst().orElse(null);
    }
}
