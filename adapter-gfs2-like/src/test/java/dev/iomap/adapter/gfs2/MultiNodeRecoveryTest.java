package dev.iomap.adapter.gfs2;

import static dev.iomap.adapter.gfs2.MultiNodeCoherenceTest.assertBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.lock.InProcessCluster;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.lock.ClusterContext;
import dev.iomap.spi.lock.ClusterJoin;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A node dies (the image is copied while it is mounted: its journal holds committed transactions not yet
 * written home) and a node joining afterwards replays the dead node's journal through the replay the
 * adapter hands the cluster: what the dead node fsync'd is there, replaying twice changes nothing, fsck
 * is clean. Without the replay the fsync'd file is not on the image.
 */
class MultiNodeRecoveryTest {
    private static final MountOptions OPTIONS = new MountOptions(PageCacheOptions.defaults(), false);

    @Test
    void aJoiningNodeReplaysADeadNodesJournalAndReadsWhatItFsynced() throws IOException {
        byte[] bytes = Nodes.pattern(9, 2 * Nodes.BLOCK + 77);
        RamBlockDevice image;
        try (Nodes nodes = new Nodes(new InProcessCluster(), 3, 16)) {
            IomapFileSystem a = nodes.mount();
            IomapFileSystem b = nodes.mount();
            assertThat(a.readdir("/")).isEmpty();
            try (IomapFile file = b.create("/b")) {
                Nodes.write(file, 0, bytes);
                file.fsync();
            }
            image = nodes.device.copy();   // both nodes "die" here: B's journal holds /b, not yet home
        }

        InProcessCluster noRecovery = new InProcessCluster();
        try (IomapFileSystem plain = CoreRuntime.mount(new Gfs2LikeAdapter(noRecovery), image.copy(), OPTIONS)) {
            assertThatThrownBy(() -> plain.open("/b")).as("without B's journal")
                    .isInstanceOf(NoSuchFileException.class);
        }

        InProcessCluster cluster = new InProcessCluster();
        AtomicInteger replays = new AtomicInteger();
        ClusterJoin recovering = (id, journals, replay) -> {
            ClusterContext context = cluster.join(id, journals, replay);
            for (int slot = 0; slot < journals; slot++) {
                if (slot != context.journal()) {
                    replay.replay(slot);
                    replay.replay(slot);
                    replays.addAndGet(2);
                }
            }
            return context;
        };
        try (IomapFileSystem survivor = CoreRuntime.mount(new Gfs2LikeAdapter(recovering), image, OPTIONS)) {
            assertThat(replays).as("replays of the two other journals, twice each").hasValue(4);
            assertBytes(Nodes.readAll(survivor, "/b"), bytes, "what B fsync'd, after recovery");
        }
        assertThat(new Gfs2LikeAdapter().fsck(image).problems()).as("fsck after recovery").isEmpty();
    }
}
