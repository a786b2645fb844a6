package dev.iomap.adapter.gfs2;

import static dev.iomap.adapter.gfs2.Nodes.pattern;
import static dev.iomap.adapter.gfs2.Nodes.readAll;
import static dev.iomap.adapter.gfs2.Nodes.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.lock.InProcessCluster;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Several gfs2-like nodes (mounts with their own page caches) on one device, kept coherent by glocks of
 * one in-process cluster: what one node wrote and gave up is what the next node reads, data, sizes and
 * names alike.
 */
class MultiNodeCoherenceTest {
    private static final int SIZE = 3 * Nodes.BLOCK + 123;

    private final InProcessCluster cluster = new InProcessCluster();

    @Test
    void aNodeReadsWhatAnotherNodeOverwroteAfterItHadCachedTheFile() throws IOException {
        byte[] first = pattern(1, SIZE);
        byte[] second = pattern(2, SIZE);
        try (Nodes nodes = new Nodes(cluster, 3, 16)) {
            IomapFileSystem a = nodes.mount();
            IomapFileSystem b = nodes.mount();
            try (IomapFile file = a.create("/f")) {
                write(file, 0, first);
                file.fsync();
                assertBytes(readAll(a, "/f", file), first, "A reads its own bytes (now cached)");
                try (IomapFile other = b.open("/f")) {
                    assertBytes(readAll(b, "/f", other), first, "B reads A's bytes");
                    write(other, 0, second);
                    other.fsync();
                }
                assertBytes(readAll(a, "/f", file), second, "A's next read, after B overwrote");
            }
            assertThat(a.stats().adapterCounters().get("glock.demotions")).as("A's demotions").isGreaterThan(0L);
            assertCleanAfterUnmount(nodes);
        }
    }

    @Test
    void aNodeReadsWhatAnotherNodeLeftDirtyInItsCache() throws IOException {
        byte[] first = pattern(3, SIZE);
        byte[] dirty = pattern(4, SIZE + 2 * Nodes.BLOCK);
        try (Nodes nodes = new Nodes(cluster, 3, 16)) {
            IomapFileSystem a = nodes.mount();
            IomapFileSystem b = nodes.mount();
            try (IomapFile file = a.create("/f")) {
                write(file, 0, first);
                file.fsync();
                write(file, 0, dirty);
                try (IomapFile other = b.open("/f")) {
                    assertBytes(readAll(b, "/f", other), dirty, "B reads A's unsynced, longer bytes");
                }
                assertBytes(readAll(a, "/f", file), dirty, "A still reads them");
            }
            assertCleanAfterUnmount(nodes);
        }
    }

    @Test
    void threeNodesAppendingToTheirOwnFilesEachReadAllThree() throws IOException {
        int rounds = 5;
        int chunk = Nodes.BLOCK + 1000;
        try (Nodes nodes = new Nodes(cluster, 3, 16)) {
            List<IomapFileSystem> fs = new ArrayList<>();
            List<IomapFile> files = new ArrayList<>();
            for (int n = 0; n < 3; n++) {
                fs.add(nodes.mount());
            }
            try {
                for (int n = 0; n < 3; n++) {
                    files.add(fs.get(n).create("/node" + n));
                }
                for (int r = 0; r < rounds; r++) {
                    for (int n = 0; n < 3; n++) {
                        write(files.get(n), (long) r * chunk, pattern(10 * n + r, chunk));
                    }
                    for (int reader = 0; reader < 3; reader++) {
                        for (int n = 0; n < 3; n++) {
                            assertBytes(readAll(fs.get(reader), "/node" + n), expected(n, r + 1, chunk),
                                    "node " + reader + " reads node " + n + "'s file after round " + r);
                        }
                    }
                }
            } finally {
                for (IomapFile file : files) {
                    file.close();
                }
            }
            assertCleanAfterUnmount(nodes);
        }
    }

    private static byte[] expected(int node, int rounds, int chunk) {
        byte[] bytes = new byte[rounds * chunk];
        for (int r = 0; r < rounds; r++) {
            System.arraycopy(pattern(10 * node + r, chunk), 0, bytes, r * chunk, chunk);
        }
        return bytes;
    }

    @Test
    void namesCreatedOnOneNodeAreSeenOnTheOtherAndUnlinksToo() throws IOException {
        try (Nodes nodes = new Nodes(cluster, 3, 16)) {
            IomapFileSystem a = nodes.mount();
            IomapFileSystem b = nodes.mount();
            assertThat(b.readdir("/")).as("B's root before").isEmpty();
            a.mkdir("/d");
            try (IomapFile file = a.create("/d/x")) {
                write(file, 0, pattern(5, 100));
            }
            assertThat(names(b.readdir("/"))).containsExactly("d");
            assertThat(names(b.readdir("/d"))).containsExactly("x");
            assertBytes(readAll(b, "/d/x"), pattern(5, 100), "read");
            b.unlink("/d/x");
            assertThat(a.readdir("/d")).as("A's listing after B's unlink").isEmpty();
            assertThatThrownBy(() -> a.open("/d/x")).isInstanceOf(NoSuchFileException.class);
            try (IomapFile file = b.create("/d/y")) {
                write(file, 0, pattern(6, 5000));
            }
            assertThat(names(a.readdir("/d"))).containsExactly("y");
            assertBytes(readAll(a, "/d/y"), pattern(6, 5000), "read");
            assertCleanAfterUnmount(nodes);
        }
    }

    private static List<String> names(List<DirEntry> entries) {
        return entries.stream().map(DirEntry::name).filter(n -> !n.equals(".") && !n.equals("..")).toList();
    }

    /** Compares bytes, saying where they first differ instead of printing them. */
    static void assertBytes(byte[] actual, byte[] expected, String what) {
        assertThat(actual.length).as(what + ": length").isEqualTo(expected.length);
        assertThat(Arrays.mismatch(actual, expected)).as(what + ": first differing byte").isEqualTo(-1);
    }

    /** Unmounts every node, then fsck finds the image clean. */
    static void assertCleanAfterUnmount(Nodes nodes) throws IOException {
        nodes.close();
        FsckReport report = new Gfs2LikeAdapter().fsck(nodes.device);
        assertThat(report.problems()).as("fsck after every node unmounted").isEmpty();
    }
}
