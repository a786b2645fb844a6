package dev.iomap.fuse;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.Capability;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/** What the real-tools tests need of an image and the machine beyond {@link MountedImage}. */
final class RealToolsImage {
    /** The image size: room for three copies of the source tree, a git repository and sparse copies. */
    static final long SIZE = 256L << 20;

    private RealToolsImage() {
    }

    /**
     * @return the adapters the real-tools tests mount: the end-to-end tests' adapter
     *     ({@link MountedImage#ADAPTER}), gfs2-like and bcachefs-like, each once
     */
    static Stream<String> adapters() {
        return Stream.of(MountedImage.ADAPTER, "gfs2-like", "bcachefs-like").distinct();
    }

    /**
     * Mounts the image through the Java API only (no FUSE), reads what the adapter declares, and
     * unmounts it again.
     *
     * @return the adapter's capabilities, with what they imply
     */
    static Set<Capability> capabilities(String adapter, Path image) throws IOException {
        try (var device = FileBlockDevice.open(image, 4096, false);
                IomapFileSystem fs = IomapFileSystems.mount(adapter, device, MountOptions.defaults())) {
            return Capability.withImplied(fs.capabilities());
        }
    }

    /**
     * @return those of {@code needed} that {@code declared} lacks, in declaration order
     */
    static Set<Capability> missing(Set<Capability> declared, Set<Capability> needed) {
        EnumSet<Capability> missing = EnumSet.copyOf(needed);
        missing.removeAll(declared);
        return missing;
    }

    /** Skips the calling test unless it runs as root, which the source tree's chown to other owners needs. */
    static void assumeRoot() throws IOException {
        Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        assumeTrue(Integer.valueOf(0).equals(uid), () -> "real-tools test skipped: it runs as uid " + uid
                + ", and only root can give the source tree's files other owners (chown 1234:5678)");
    }

    /** Skips the calling test, naming the tool, if one of {@code tools} is not installed. */
    static void assumeTools(List<String> tools) {
        for (String tool : tools) {
            assumeTrue(MountedImage.onPath(tool), "real-tools test skipped: " + tool + " is not installed "
                    + "(.ci/run installs rsync and attr; the others come with the base system)");
        }
    }
}
