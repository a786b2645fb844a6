package dev.iomap.cli;

import java.nio.file.Path;

/**
 * The directory a command's relative paths are relative to. A command run by {@code bin/iomap} has the
 * JVM's own working directory; one run by the mount server ({@link MountServer}) has its client's, which
 * the server binds for the command's thread ({@link #CURRENT}), since a JVM has one working directory for
 * all its threads.
 */
final class WorkingDirectory {

    /** The client's working directory, bound while the server runs a command for it. */
    static final ScopedValue<Path> CURRENT = ScopedValue.newInstance();

    private WorkingDirectory() {
    }

    /**
     * @param text a path as given on a command line
     * @return it, resolved against the client's working directory where one is bound and it is relative;
     *     otherwise as given
     */
    static Path resolve(String text) {
        Path path = Path.of(text);
        return CURRENT.isBound() ? CURRENT.get().resolve(path) : path;
    }
}
