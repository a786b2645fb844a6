package dev.iomap.cli;

import dev.iomap.fuse.MountTable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Where an image is mounted, as the kernel's mount table of this mount namespace says
 * ({@code /proc/self/mountinfo}): a {@code fuse.iomap} mount whose source is the image, or a
 * {@code fuseblk.iomap} mount over a loop device whose backing file is the image. A mount refused because
 * its image is busy asks this first: a mounted image is refused at once ("mounted on DIR"), and only an
 * image that is not in the table (a mount unmounted a moment ago, still writing back) is waited for.
 */
final class MountedImages {
    private MountedImages() {
    }

    /**
     * @param image an image file
     * @return the mount point of a mount of it, if the mount table lists one
     * @throws IOException if the mount table cannot be read
     */
    static Optional<Path> mountPointOf(Path image) throws IOException {
        return mountPointOf(image, MountTable.read());
    }

    /**
     * @param image an image file
     * @param mountInfo the lines of a mount table (mountinfo(5))
     * @return the mount point of the first iomap mount whose source is the image (or a loop device over it)
     */
    static Optional<Path> mountPointOf(Path image, List<String> mountInfo) {
        Path target = canonical(image);
        for (MountTable.FuseMount mount : MountTable.fuseMounts(mountInfo)) {
            Optional<Path> source = switch (mount.type()) {
                case "fuse.iomap" -> Optional.of(Path.of(mount.source()));
                case "fuseblk.iomap" -> backingFile(Path.of(mount.source()));
                default -> Optional.empty();
            };
            if (source.isPresent() && canonical(source.get()).equals(target)) {
                return Optional.of(mount.mountPoint());
            }
        }
        return Optional.empty();
    }

    /** @return the backing file of a loop device, if it is one with a backing file */
    private static Optional<Path> backingFile(Path device) {
        try {
            return Optional.of(LoopDevice.backingFile(device));
        } catch (IOException | UsageException e) {
            return Optional.empty();
        }
    }

    private static Path canonical(Path path) {
        try {
            return path.toRealPath();
        } catch (IOException e) {
            return path.toAbsolutePath().normalize();
        }
    }
}
