package dev.iomap.cli.observe;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Properties;
import java.util.Set;

/**
 * Where a running mount says how to reach it: a directory only its user may enter, holding for each mount
 * point a small properties file ({@code KEY.mount}: pid, mount point, socket, metrics address) and the
 * socket it names ({@code KEY-PID-N.sock}, one per mount, so that a mount still closing at a mount point,
 * in this process or another, never takes the socket or file of the mount that followed it there),
 * {@code KEY} being a hash of the mount point's real path. The directory is
 * {@code $XDG_RUNTIME_DIR/iomap} when that variable names a directory, else {@code /run/iomap} for root,
 * else {@code java.io.tmpdir/iomap-USER}; it is made with mode 0700, and one that another user owns or
 * that others may enter is refused, so no other user can place a socket there or reach one in it.
 *
 * @param directory the runtime directory
 */
public record MountRuntime(Path directory) {
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    /**
     * This process's lock of runtime files: in one process (the mount server) a mount closing never removes
     * the file of the mount that followed it at its mount point. Between processes a window of a read and
     * a delete is left (a mount process ending as another starts at its mount point); losing it costs the
     * newer mount its runtime file (iomap top and trace do not find it), never data.
     */
    private static final Object FILES = new Object();
    /** Sockets made by this process, for {@link #newSocket}. */
    private static final java.util.concurrent.atomic.AtomicLong SOCKETS = new java.util.concurrent.atomic.AtomicLong();

    /**
     * The runtime directory of this process's user, made if missing.
     *
     * @return it
     * @throws IOException if it cannot be made, or belongs to someone else, or others may enter it
     */
    public static MountRuntime forCurrentUser() throws IOException {
        return at(defaultDirectory());
    }

    /**
     * A runtime directory at {@code directory}, made if missing (tests use their own).
     *
     * @param directory where
     * @return it
     * @throws IOException if it cannot be made, or belongs to someone else, or others may enter it
     */
    public static MountRuntime at(Path directory) throws IOException {
        if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
            Files.createDirectories(directory.getParent());
            try {
                Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            } catch (java.nio.file.FileAlreadyExistsException raced) {
                // made meanwhile by another mount of the same user: checked below
            }
        }
        String owner = Files.getOwner(directory, LinkOption.NOFOLLOW_LINKS).getName();
        if (!owner.equals(currentUser())) {
            throw new IOException("the runtime directory " + directory + " belongs to " + owner + ", not to "
                    + currentUser() + "; set XDG_RUNTIME_DIR to a directory of your own");
        }
        if (!Files.getPosixFilePermissions(directory, LinkOption.NOFOLLOW_LINKS).equals(OWNER_ONLY)) {
            throw new IOException("the runtime directory " + directory + " may be entered by other users (mode "
                    + PosixFilePermissions.toString(Files.getPosixFilePermissions(directory)) + "); make it"
                    + " rwx------ (chmod 700) or remove it");
        }
        return new MountRuntime(directory);
    }

    /** @return the directory this user's mounts use, by the rule in the class comment */
    static Path defaultDirectory() throws IOException {
        String xdg = System.getenv("XDG_RUNTIME_DIR");
        if (xdg != null && !xdg.isBlank() && Files.isDirectory(Path.of(xdg))) {
            return Path.of(xdg, "iomap");
        }
        if (isRoot()) {
            return Path.of("/run/iomap");
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "iomap-" + currentUser());
    }

    private static boolean isRoot() throws IOException {
        return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
    }

    /** @return the name of the user this process runs as */
    static String currentUser() throws IOException {
        return Files.getOwner(Path.of("/proc/self")).getName();
    }

    /**
     * @param mountPoint a mount point (any form: it is made real, so a relative path or a symbolic link
     *     names the same mount)
     * @return the key of its files in this directory
     * @throws IOException if the mount point does not exist
     */
    static String key(Path mountPoint) throws IOException {
        String real = mountPoint.toRealPath().toString();
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(real.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is in every JDK", e);
        }
    }

    /**
     * @param mountPoint the mount point
     * @return a path for a new mount's socket there, no other mount's (of any process)
     * @throws IOException if the mount point does not exist
     */
    public Path newSocket(Path mountPoint) throws IOException {
        return directory.resolve(key(mountPoint) + "-" + ProcessHandle.current().pid() + "-" + SOCKETS.incrementAndGet()
                + ".sock");
    }

    /**
     * @param mountPoint the mount point
     * @return the path of its properties file
     * @throws IOException if the mount point does not exist
     */
    public Path infoFile(Path mountPoint) throws IOException {
        return directory.resolve(key(mountPoint) + ".mount");
    }

    /**
     * Writes a mount's properties file (atomically: readers never see half of it).
     *
     * @param info what to write
     * @throws IOException if it cannot be written
     */
    public void publish(MountInfo info) throws IOException {
        Path file = infoFile(info.mountPoint());
        Path temporary = directory.resolve(file.getFileName() + ".tmp");
        synchronized (FILES) {
            try (OutputStream out = Files.newOutputStream(temporary)) {
                info.toProperties().store(out, "iomap mount: how to reach it (iomap trace, iomap top)");
            }
            Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
    }

    /**
     * Reads the properties file of the mount at {@code mountPoint}, if its process still runs.
     *
     * @param mountPoint the mount point
     * @return what the mount published
     * @throws IOException if no running iomap mount published one for that mount point
     */
    public MountInfo find(Path mountPoint) throws IOException {
        Path file = infoFile(mountPoint);
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            properties.load(in);
        } catch (NoSuchFileException e) {
            throw new NoMountException("no iomap mount of " + currentUser() + " at " + mountPoint.toRealPath()
                    + " (no " + file + "); is it mounted with iomap mount, by you?");
        }
        MountInfo info = MountInfo.fromProperties(properties);
        if (ProcessHandle.of(info.pid()).isEmpty()) {
            throw new NoMountException("the iomap mount at " + info.mountPoint() + " is gone (its process "
                    + info.pid() + " has ended; " + file + " is left over)");
        }
        return info;
    }

    /**
     * Removes a mount's files (at unmount): its socket, and the properties file if it still names that
     * socket (a mount that followed at the same mount point, in this process or another, has replaced it).
     *
     * @param mountPoint the mount point
     * @param socket the mount's socket
     * @throws IOException if they cannot be removed
     */
    public void withdraw(Path mountPoint, Path socket) throws IOException {
        Path file = infoFile(mountPoint);
        synchronized (FILES) {
            Properties properties = new Properties();
            try (InputStream in = Files.newInputStream(file)) {
                properties.load(in);
                if (MountInfo.fromProperties(properties).socket().equals(socket)) {
                    Files.deleteIfExists(file);
                }
            } catch (NoSuchFileException gone) {
                // withdrawn already
            } catch (IllegalArgumentException unreadable) {
                Files.deleteIfExists(file);
            }
        }
        Files.deleteIfExists(socket);
    }

    /** No running mount at the mount point asked about. */
    public static final class NoMountException extends IOException {
        private static final long serialVersionUID = 1L;

        NoMountException(String message) {
            super(message);
        }
    }
}
