package dev.iomap.cluster;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.ClusterSpec;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A gfs2-like cluster node in a process of its own, for {@link PausedNodeTest}: mounts the image (shared,
 * direct I/O, as {@code iomap mount --cluster} opens it) as node {@code NODE_ID} through the {@code zk}
 * provider, writes {@code FILE} ({@code BLOCKS} blocks of round 0's pattern) and fsyncs it, prints
 * {@code ready}, then overwrites the whole file with round {@code r}'s pattern and fsyncs it, round after
 * round, for ever. Each round prints one line on stdout: {@code fsync R} when the fsync returned,
 * {@code refused R CLASS: MESSAGE} (of the innermost cause) when the write or the fsync failed. Stops
 * when its parent kills it.
 *
 * <p>Arguments: {@code IMAGE CONNECT_STRING NODE_ID FILE BLOCKS}.
 */
public final class LoopingNodeMain {
    /** The filesystem block size of the test image. */
    static final int BLOCK = 4096;

    private LoopingNodeMain() {
    }

    /**
     * @param args {@code IMAGE CONNECT_STRING NODE_ID FILE BLOCKS}
     * @throws Exception if the mount or the first write fails (the parent sees the process end)
     */
    public static void main(String[] args) throws Exception {
        Path image = Path.of(args[0]);
        ClusterSpec cluster = ClusterSpec.parse("zk=" + args[1]).withNodeId(args[2]);
        String file = args[3];
        int blocks = Integer.parseInt(args[4]);
        PrintStream out = System.out;
        FileBlockDevice device = FileBlockDevice.openShared(image, BLOCK, true);
        IomapFileSystem fs = CoreRuntime.mount(new Gfs2LikeAdapter(), device,
                new MountOptions(PageCacheOptions.defaults(), true).withCluster(cluster));
        try (IomapFile f = fs.create(file)) {
            write(f, pattern(0, blocks * BLOCK));
            f.fsync();
        }
        out.println("ready");
        out.flush();
        IomapFile f = fs.open(file);
        for (int round = 1; ; round++) {
            try {
                write(f, pattern(round, blocks * BLOCK));
                f.fsync();
                out.println("fsync " + round);
            } catch (IOException | RuntimeException e) {
                Throwable cause = e;
                while (cause.getCause() != null) {
                    cause = cause.getCause();
                }
                out.println("refused " + round + " " + cause.getClass().getSimpleName() + ": " + cause.getMessage());
                Thread.sleep(20);
            }
            out.flush();
        }
    }

    /**
     * @param round the writer's round; 0 is the first write; a negative round is another node's
     * @param length bytes
     * @return the bytes a round writes: every 8-byte word says the round and its offset
     */
    static byte[] pattern(int round, int length) {
        ByteBuffer bytes = ByteBuffer.allocate(length);
        for (int at = 0; at + 8 <= length; at += 8) {
            bytes.putLong(at, ((long) round << 40) | at);
        }
        return bytes.array();
    }

    private static void write(IomapFile f, byte[] bytes) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(bytes);
        while (src.hasRemaining()) {
            f.write(src.position(), src);
        }
    }
}
