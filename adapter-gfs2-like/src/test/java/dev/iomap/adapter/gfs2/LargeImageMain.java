package dev.iomap.adapter.gfs2;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsStat;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * The child JVM of {@link LargeImageTest}: what {@code iomap mkfs} does to a sparse image file (format,
 * mount, statfs, unmount), then a file written and read back after a remount, and fsck. Prints the
 * statfs line and {@code clean} if fsck finds nothing.
 */
public final class LargeImageMain {
    private LargeImageMain() {
    }

    /**
     * @param args the image file and its size in bytes
     * @throws IOException if a step fails
     */
    public static void main(String[] args) throws IOException {
        Path image = Path.of(args[0]);
        long bytes = Long.parseLong(args[1]);
        int block = 4096;
        byte[] data = BigTransactionTest.pattern(6, 3 * block + 5);
        try (FileBlockDevice device = FileBlockDevice.open(image, block, bytes, false)) {
            IomapFileSystems.format("gfs2-like", device, FormatOptions.blockSize(block));
            try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", device, MountOptions.defaults())) {
                FsStat stat = fs.statfs();
                System.out.println(stat.totalBlocks() + " blocks, " + stat.freeBlocks() + " free");
                try (IomapFile file = fs.create("/f")) {
                    file.write(0, ByteBuffer.wrap(data));
                }
            }
            try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", device, MountOptions.defaults())) {
                if (!java.util.Arrays.equals(BigTransactionTest.readAll(fs, "/f"), data)) {
                    System.out.println("/f reads back other bytes");
                }
            }
            var problems = IomapFileSystems.fsck("gfs2-like", device).problems();
            System.out.println(problems.isEmpty() ? "clean" : "fsck: " + problems);
        }
    }
}
