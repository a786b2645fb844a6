package dev.iomap.adapter.gfs2;

import static dev.iomap.adapter.gfs2.MultiNodeCoherenceTest.assertBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.lock.InProcessCluster;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 item 8 on an in-process cluster: an inode unlinked on one node while another has it open is
 * kept, blocks and all, until its last close on every node ({@link Iopen}); a third node's unlink of a
 * file two nodes have open leaves it to the last to close; a node that dies with it open leaves it to a
 * survivor, which frees it at its next inode allocation after recovering the dead node's journal.
 */
class UnlinkedOpenNodesTest {
    private static final int BLOCK = Nodes.BLOCK;

    private static long counter(IomapFileSystem fs, String name) {
        return fs.stats().adapterCounters().getOrDefault(name, 0L);
    }

    /** @return the free blocks after {@code fs} committed (a freed block counts once committed) */
    private static long free(IomapFileSystem fs) throws IOException {
        fs.sync();
        return fs.statfs().freeBlocks();
    }

    /** Creates and removes a file on each node, so that their first allocations (reclaim passes) are done. */
    private static void warm(IomapFileSystem... nodes) throws IOException {
        for (IomapFileSystem fs : nodes) {
            fs.create("/warm").close();
            fs.unlink("/warm");
        }
    }

    @Test
    void theLastOfTwoNodesHoldingAnUnlinkedFileFreesIt() throws IOException {
        RamBlockDevice device;
        try (Nodes nodes = new Nodes(new InProcessCluster(), 3, 16)) {
            device = nodes.device;
            IomapFileSystem a = nodes.mount();
            IomapFileSystem b = nodes.mount();
            IomapFileSystem c = nodes.mount();
            warm(a, b, c);
            long free = free(a);
            byte[] bytes = Nodes.pattern(1, 3 * BLOCK + 5);
            try (IomapFile file = a.create("/f")) {
                Nodes.write(file, 0, bytes);
                file.fsync();
            }
            IomapFile onB = b.open("/f");
            IomapFile onC = c.open("/f");
            a.unlink("/f");
            assertThat(counter(a, "iopen.deferred")).as("A was refused").isEqualTo(1);
            assertThatThrownBy(() -> b.open("/f")).isInstanceOf(NoSuchFileException.class);

            long freedByB = counter(b, "iopen.freed");
            onB.close();
            assertThat(counter(b, "iopen.deferred")).as("B was refused: C has it open").isEqualTo(1);
            assertThat(counter(b, "iopen.freed")).isEqualTo(freedByB);
            Nodes.write(onC, 0, Nodes.pattern(2, BLOCK));
            onC.fsync();
            assertBytes(read(onC), withPrefix(bytes, Nodes.pattern(2, BLOCK)), "C reads its file after B's close");
            long freedByC = counter(c, "iopen.freed");
            onC.close();
            assertThat(counter(c, "iopen.freed") - freedByC).as("C, the last, freed it").isEqualTo(1);
            assertThat(free(a)).as("every block back").isEqualTo(free);
        }
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).isEmpty();
    }

    @Test
    void aNodeThatDiesWithAnUnlinkedFileOpenLeavesItToTheSurvivorsNextAllocation() throws IOException {
        InProcessCluster cluster = new InProcessCluster();
        RamBlockDevice device;
        try (Nodes nodes = new Nodes(cluster, 3, 16)) {
            device = nodes.device;
            IomapFileSystem a = nodes.mount();
            IomapFileSystem b = nodes.mount();
            warm(a, b);
            long free = free(a);
            try (IomapFile file = a.create("/f")) {
                Nodes.write(file, 0, Nodes.pattern(3, 2 * BLOCK));
                file.fsync();
            }
            IomapFile held = b.open("/f");
            Nodes.write(held, 2 * BLOCK, Nodes.pattern(4, 3 * BLOCK));
            held.fsync();
            a.unlink("/f");
            assertThat(free(a)).as("/f kept while B has it open").isLessThan(free - 5);

            cluster.kill(1);   // B (slot 1) dies with /f open; A replays its journal
            long freedByA = counter(a, "iopen.freed");
            a.create("/after").close();
            assertThat(counter(a, "iopen.freed") - freedByA).as("/f freed at A's first allocation after B's recovery")
                    .isEqualTo(1);
            a.unlink("/after");
            assertThat(free(a)).as("every block back").isEqualTo(free);
            try {
                nodes.unmount(b);
            } catch (IOException expected) {
                // the dead node cannot unmount: fenced
            }
        }
        assertThat(new Gfs2LikeAdapter().fsck(device).problems()).isEmpty();
    }

    private static byte[] read(IomapFile file) throws IOException {
        java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate((int) file.stat().size());
        while (buffer.hasRemaining() && file.read(buffer.position(), buffer) > 0) {
            // until full or EOF
        }
        return java.util.Arrays.copyOf(buffer.array(), buffer.position());
    }

    private static byte[] withPrefix(byte[] bytes, byte[] prefix) {
        byte[] out = bytes.clone();
        System.arraycopy(prefix, 0, out, 0, prefix.length);
        return out;
    }
}
