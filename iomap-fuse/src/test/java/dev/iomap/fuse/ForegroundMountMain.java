package dev.iomap.fuse;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What {@code iomap mount --adapter NAME IMAGE MOUNTPOINT} does, as a main class the tests run in a
 * child JVM (to send it SIGINT): {@code ADAPTER IMAGE MOUNTPOINT [SIZE_TO_FORMAT]}.
 */
public final class ForegroundMountMain {
    private ForegroundMountMain() {
    }

    public static void main(String[] args) throws Exception {
        String adapter = args[0];
        Path image = Path.of(args[1]);
        Path mountPoint = Path.of(args[2]);
        if (args.length > 3 && !Files.exists(image)) {
            try (var device = FileBlockDevice.open(image, 4096, Long.parseLong(args[3]), false)) {
                IomapFileSystems.format(adapter, device, FormatOptions.blockSize(4096));
            }
        }
        var device = FileBlockDevice.open(image, 4096, false);
        IomapFileSystem fs = IomapFileSystems.mount(adapter, device, MountOptions.defaults());
        int status = IomapMount.mountForeground(fs, device, mountPoint, FuseMountOptions.defaults());
        System.exit(status);
    }
}
