package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.lock.ClusterContext;
import dev.iomap.spi.lock.ClusterJoin;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The device fence of a gfs2-like ZooKeeper node: once its session is gone, not one more byte of it
 * reaches the shared device (its own device view counts what does), neither metadata nor the core's
 * data writeback, every further change fails with {@link NodeFencedException}, and another node
 * recovers its journal and reads what it fsync'd. (The core's own flush of its device after a failed fsync
 * still reaches the device: it carries nothing of this node, whose writes all stopped at the fence.)
 */
class Gfs2ZkFenceTest {
    private static final int BLOCK = 4096;
    private static final int SIZE = 3 * BLOCK + 123;
    private static final MountOptions OPTIONS = new MountOptions(PageCacheOptions.defaults(), false);

    @Test
    @Timeout(120)
    void aNodeWhoseSessionWasClosedWritesNothingMoreAndAnotherNodeRecoversIt() throws Exception {
        RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);
        new Gfs2LikeAdapter().format(device, new FormatOptions(BLOCK, "fence", Map.of("journals", "3")));
        byte[] synced = pattern(1, SIZE);
        try (ZkTestServer zk = new ZkTestServer()) {
            CuratorFramework clientA = zk.client();
            AtomicReference<ClusterContext> contextA = new AtomicReference<>();
            ZkClusterJoin joinA = new ZkClusterJoin(clientA, "A", Duration.ofMillis(200));
            ClusterJoin capturing = (id, journals, replay) -> {
                ClusterContext context = joinA.join(id, journals, replay);
                contextA.set(context);
                return context;
            };
            NodeDevice deviceA = new NodeDevice(device);
            IomapFileSystem a = CoreRuntime.mount(new Gfs2LikeAdapter(capturing), deviceA, OPTIONS);
            IomapFileSystem b = CoreRuntime.mount(new Gfs2LikeAdapter(
                    new ZkClusterJoin(zk.client(), "B", Duration.ofMillis(200))), device, OPTIONS);
            try {
                IomapFile fa = a.create("/a");
                write(fa, 0, synced);
                fa.fsync();
                IomapFile fc = a.create("/c");
                write(fc, 0, pattern(2, SIZE));   // dirty in A's cache only

                zk.killSession(clientA);
                ZkTestServer.await("A fenced itself", () -> isFenced(contextA.get()));
                long writes = deviceA.writes();
                long bytes = deviceA.bytesWritten();

                assertThatThrownBy(() -> write(fa, 0, pattern(3, SIZE))).as("a write into A's cache")
                        .isInstanceOf(NodeFencedException.class).hasMessageContaining("fenced itself");
                assertThatThrownBy(fc::fsync).as("writing back A's dirty data").isInstanceOf(IOException.class)
                        .satisfies(e -> assertThat(rootCause(e)).isInstanceOf(NodeFencedException.class));
                assertThatThrownBy(a::sync).as("sync of A").isInstanceOf(IOException.class)
                        .satisfies(e -> assertThat(rootCause(e)).isInstanceOf(NodeFencedException.class));
                assertThatThrownBy(() -> a.create("/d")).as("a create on A")
                        .isInstanceOf(NodeFencedException.class);
                assertThat(deviceA.writes()).as("writes of A that reached the device after the fence")
                        .isEqualTo(writes);
                assertThat(deviceA.bytesWritten()).as("bytes of A that reached the device after the fence")
                        .isEqualTo(bytes);

                assertBytes(readAll(b, "/a"), synced, "B reads what A fsync'd, after recovering A's journal");
                try (IomapFile fb = b.open("/a")) {
                    write(fb, 0, pattern(4, SIZE));
                    fb.fsync();
                }
                assertBytes(readAll(b, "/a"), pattern(4, SIZE), "B's own overwrite");
                assertThatThrownBy(a::close).as("unmounting the fenced node")
                        .satisfies(e -> assertThat(rootCause(e)).isInstanceOf(NodeFencedException.class));
                assertThat(deviceA.writes()).as("writes of A that reached the device after the fence, at the end")
                        .isEqualTo(writes);
            } finally {
                b.close();
            }
        }
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).as("fsck after recovery").isEmpty();
    }

    private static boolean isFenced(ClusterContext context) {
        try {
            context.checkWrite();
            return false;
        } catch (IOException e) {
            return e instanceof NodeFencedException;
        }
    }

    static Throwable rootCause(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && !(t instanceof NodeFencedException)) {
            t = t.getCause();
        }
        return t;
    }

    static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + seed * 7 + 3);
        }
        return bytes;
    }

    static void write(IomapFile file, long pos, byte[] bytes) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(bytes);
        while (src.hasRemaining()) {
            file.write(pos + src.position(), src);
        }
    }

    static byte[] readAll(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            ByteBuffer buffer = ByteBuffer.allocate((int) fs.stat(path).size());
            while (buffer.hasRemaining() && file.read(buffer.position(), buffer) > 0) {
                // reads until full or EOF
            }
            return Arrays.copyOf(buffer.array(), buffer.position());
        }
    }

    static void assertBytes(byte[] actual, byte[] expected, String what) {
        assertThat(actual.length).as(what + ": length").isEqualTo(expected.length);
        assertThat(Arrays.mismatch(actual, expected)).as(what + ": first differing byte").isEqualTo(-1);
    }
}
