package dev.iomap.adapter.gfs2;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;

/**
 * The child JVM of {@link JdataHeapTest}: writes many times the journal's size of journaled data through a
 * {@code data=journal} mount on a RAM device (off-heap), with background writeback, unmounts, and prints
 * {@code clean} if fsck finds nothing. Its heap is far smaller than the data: it exits 0 only if what the
 * adapter keeps of journaled data is bounded by the journal, not by the data written.
 */
public final class JdataHeapMain {
    private JdataHeapMain() {
    }

    /**
     * @param args the MiB of data to write
     * @throws IOException if the filesystem fails
     */
    public static void main(String[] args) throws IOException {
        long mib = Long.parseLong(args[0]);
        int block = 4096;
        RamBlockDevice device = new RamBlockDevice(block, (mib + 64) << 20);
        IomapFileSystems.format("gfs2-like", device, FormatOptions.blockSize(block));
        PageCacheOptions cache = PageCacheOptions.builder().cacheBudgetBytes(16L << 20)
                .dirtyBackgroundBytes(4L << 20).dirtyLimitBytes(8L << 20).build();
        MountOptions options = new MountOptions(cache, true).withAdapterOptions(Map.of("data", "journal"));
        byte[] chunk = new byte[1 << 20];
        try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", device, options)) {
            for (long m = 0; m < mib; m++) {
                java.util.Arrays.fill(chunk, (byte) m);
                String path = "/f" + m % 8;
                try (IomapFile file = m < 8 ? fs.create(path) : fs.open(path)) {
                    file.write(file.size(), ByteBuffer.wrap(chunk));
                }
            }
        }
        var problems = IomapFileSystems.fsck("gfs2-like", device).problems();
        System.out.println(problems.isEmpty() ? "clean" : "fsck: " + problems);
    }
}
