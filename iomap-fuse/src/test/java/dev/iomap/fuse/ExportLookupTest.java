package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lookups of {@code FUSE_EXPORT_SUPPORT} ({@code open_by_handle_at}): "{@code .}" of a node id the
 * kernel forgot finds the inode by number, remembers the directories on the way without counting them,
 * and counts one lookup of the inode; "{@code ..}" of a directory answers its parent; a removed inode is
 * ENOENT (the kernel answers ESTALE). No kernel: the bridge is called directly, over snapfs.
 */
class ExportLookupTest {
    private static final long ROOT = Nodes.ROOT;
    private static final InodeOperations.Caller USER = new InodeOperations.Caller(0, 0);

    private RamBlockDevice device;
    private IomapFileSystem fs;
    private FuseBridge bridge;

    @BeforeEach
    void mount() throws IOException {
        device = new RamBlockDevice(512, 4L << 20);
        IomapFileSystems.format(SnapAdapter.NAME, device, FormatOptions.blockSize(4096));
        fs = IomapFileSystems.mount(SnapAdapter.NAME, device, MountOptions.defaults());
        bridge = new FuseBridge(fs, USER, CacheMode.of(FuseMountOptions.defaults(), true));
    }

    @AfterEach
    void unmount() throws IOException {
        bridge.releaseAll();
        fs.close();
        device.close();
    }

    /** Makes /a/b/f and /a/g, then forgets every node as the kernel's cache eviction would. */
    private long[] makeAndForget() throws IOException {
        long a = bridge.mkdir(ROOT, "a", 0755, USER).nodeid();
        long b = bridge.mkdir(a, "b", 0755, USER).nodeid();
        FuseBridge.Created f = bridge.create(b, "f", 0644, 2, USER);
        bridge.release(f.opened().fh());
        FuseBridge.Created gCreated = bridge.create(a, "g", 0644, 2, USER);
        bridge.release(gCreated.opened().fh());
        long g = gCreated.entry().nodeid();
        for (long nodeid : new long[] {f.entry().nodeid(), g, b, a}) {
            bridge.forget(nodeid, 1);
        }
        assertThat(bridge.nodes().nodeids()).containsExactly(ROOT);
        return new long[] {a, b, f.entry().nodeid(), g};
    }

    @Test
    void dotOfAForgottenNodeFindsTheInodeByNumberAndCountsOneLookup() throws Exception {
        long[] made = makeAndForget();
        long f = made[2];

        FuseBridge.Entry found = bridge.lookup(f, ".");

        assertThat(found.nodeid()).isEqualTo(f);
        assertThat(bridge.nodes().path(f)).isEqualTo("/a/b/f");
        assertThat(bridge.nodes().lookups(f)).isOne();
        assertThat(bridge.nodes().lookups(made[0])).as("passed through, not counted").isZero();
        assertThat(bridge.nodes().lookups(made[1])).isZero();
        assertThat(bridge.getattr(f, 0).size()).isZero();

        bridge.forget(f, 1);
        assertThat(bridge.nodes().nodeids()).as("the directories go with it").containsExactly(ROOT);
    }

    @Test
    void dotOfAKnownNodeCountsOneMoreLookup() throws Exception {
        long a = bridge.mkdir(ROOT, "a", 0755, USER).nodeid();

        assertThat(bridge.lookup(a, ".").nodeid()).isEqualTo(a);
        assertThat(bridge.nodes().lookups(a)).isEqualTo(2);
    }

    @Test
    void dotDotOfADirectoryIsItsParent() throws Exception {
        long[] made = makeAndForget();
        bridge.lookup(made[1], ".");

        assertThat(bridge.lookup(made[1], "..").nodeid()).isEqualTo(made[0]);
        assertThat(bridge.lookup(made[0], "..").nodeid()).isEqualTo(ROOT);
        assertThat(bridge.lookup(ROOT, "..").nodeid()).isEqualTo(ROOT);
    }

    @Test
    void aRemovedInodeIsNotFound() throws Exception {
        long[] made = makeAndForget();
        fs.unlink("/a/g");

        assertThatThrownBy(() -> bridge.lookup(made[3], ".")).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> bridge.lookup(123_456, ".")).isInstanceOf(NoSuchFileException.class);
        assertThat(bridge.nodes().nodeids()).containsExactly(ROOT);
    }
}
