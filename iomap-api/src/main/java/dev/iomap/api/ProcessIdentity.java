package dev.iomap.api;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The user and group of the running process, read once from {@code /proc/self/status} (0 elsewhere). */
final class ProcessIdentity {
    static final int UID;
    static final int GID;

    static {
        int uid = 0;
        int gid = 0;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    uid = effective(line);
                } else if (line.startsWith("Gid:")) {
                    gid = effective(line);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or /proc not mounted: files are owned by 0
        }
        UID = uid;
        GID = gid;
    }

    private ProcessIdentity() {
    }

    /** "Uid:\treal\teffective\tsaved\tfs": the effective id, which owns what the process creates. */
    private static int effective(String line) {
        String[] fields = line.trim().split("\\s+");
        return Integer.parseUnsignedInt(fields[2]);
    }
}
