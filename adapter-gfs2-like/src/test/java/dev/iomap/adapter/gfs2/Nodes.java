package dev.iomap.adapter.gfs2;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.lock.ClusterJoin;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Several gfs2-like mounts (nodes) of one RAM device in one JVM, each with its own page cache, joined
 * through one {@link ClusterJoin}. Closing unmounts every node still mounted (in reverse order), also
 * when a test failed.
 */
final class Nodes implements AutoCloseable {
    static final int BLOCK = 4096;

    final RamBlockDevice device;
    private final Gfs2LikeAdapter adapter;
    private final List<IomapFileSystem> mounted = new ArrayList<>();

    /**
     * Formats a device of {@code megabytes} with {@code journals} journals.
     *
     * @param cluster how the nodes join
     * @param journals journal slots (the most nodes)
     * @param megabytes device size
     */
    Nodes(ClusterJoin cluster, int journals, int megabytes) throws IOException {
        this.device = new RamBlockDevice(BLOCK, (long) megabytes << 20);
        this.adapter = new Gfs2LikeAdapter(cluster);
        adapter.format(device, new FormatOptions(BLOCK, "nodes", Map.of("journals", Integer.toString(journals))));
    }

    /** @return a new node: a mount of the device with its own cache and no background writeback */
    IomapFileSystem mount() throws IOException {
        IomapFileSystem fs = CoreRuntime.mount(adapter, device, new MountOptions(PageCacheOptions.defaults(), false));
        mounted.add(fs);
        return fs;
    }

    /** Unmounts one node. */
    void unmount(IomapFileSystem fs) throws IOException {
        mounted.remove(fs);
        fs.close();
    }

    /** Unmounts every node still mounted, last first; the first failure is thrown after all were tried. */
    @Override
    public void close() throws IOException {
        IOException failure = null;
        for (int i = mounted.size() - 1; i >= 0; i--) {
            try {
                mounted.get(i).close();
            } catch (IOException | RuntimeException e) {
                if (failure == null) {
                    failure = new IOException("unmounting node " + i + " failed", e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        mounted.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /** @return {@code length} bytes of a pattern that differs per {@code seed} */
    static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + seed * 7 + 3);
        }
        return bytes;
    }

    /** @return the whole file as the node reads it now */
    static byte[] readAll(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            return readAll(fs, path, file);
        }
    }

    /** @return the whole of an open file as its node reads it now (size from stat) */
    static byte[] readAll(IomapFileSystem fs, String path, IomapFile file) throws IOException {
        long size = fs.stat(path).size();
        ByteBuffer buffer = ByteBuffer.allocate((int) size);
        while (buffer.hasRemaining()) {
            int n = file.read(buffer.position(), buffer);
            if (n <= 0) {
                break;
            }
        }
        return Arrays.copyOf(buffer.array(), buffer.position());
    }

    /** Writes all of {@code bytes} at {@code pos}. */
    static void write(IomapFile file, long pos, byte[] bytes) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(bytes);
        while (src.hasRemaining()) {
            file.write(pos + src.position(), src);
        }
    }
}
