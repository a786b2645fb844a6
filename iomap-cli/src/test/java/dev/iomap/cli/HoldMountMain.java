package dev.iomap.cli;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A second process for {@link ExclusiveImageTest}: mounts {@code args[1]} with adapter
 * {@code args[0]}, writes {@code args[2]} to {@code /held}, prints {@code mounted} and keeps the
 * image mounted until its standard input closes; then unmounts cleanly.
 */
public final class HoldMountMain {

    private HoldMountMain() {
    }

    /** @param args adapter, image, content of {@code /held} */
    public static void main(String[] args) throws IOException {
        try (var device = FileBlockDevice.open(Path.of(args[1]), 4096, false);
                IomapFileSystem fs = IomapFileSystems.mount(args[0], device, MountOptions.defaults())) {
            try (IomapFile file = fs.create("/held")) {
                file.write(0, ByteBuffer.wrap(args[2].getBytes(StandardCharsets.UTF_8)));
                file.fsync();
            }
            System.out.println("mounted");
            System.out.flush();
            while (System.in.read() >= 0) {
                // held until the test closes our standard input
            }
        }
    }
}
