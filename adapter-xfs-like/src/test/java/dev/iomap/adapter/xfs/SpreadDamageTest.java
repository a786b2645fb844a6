package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystems;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, data-loss case 5: forged but checksum-valid metadata must not let a mount spread the damage.
 * Each image below is forged from a cleanly unmounted one; the mount is either refused or shuts down
 * before anything lands on another file's blocks, and afterwards the victim's bytes are unchanged and
 * fsck does not call the image clean.
 */
class SpreadDamageTest {
    private static final byte[] VICTIM = pattern(7, 0, 3 * XfsFixture.BLOCK);

    /** An unmounted image with /victim (3 blocks, inode 2) and /other (1 block, inode 3). */
    private static XfsFixture image() throws IOException {
        XfsFixture fx = XfsFixture.create();
        try (IomapFile victim = fx.write("/victim", VICTIM)) {
            victim.fsync();
        }
        try (IomapFile other = fx.write("/other", pattern(8, 0, XfsFixture.BLOCK))) {
            other.fsync();
        }
        fx.unmountAndCheck();
        return fx;
    }

    private static Extent victimExtent(XfsFixture fx) throws IOException {
        return Images.load(fx.device).inodes.get(2L).data.extents().getFirst();
    }

    private static byte[] deviceBytes(XfsFixture fx, Extent extent) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(Math.toIntExact(extent.length() * XfsFixture.BLOCK));
        fx.device.read(extent.deviceBlock() * XfsFixture.BLOCK, buffer);
        return buffer.array();
    }

    /** Mounts the forged image and runs {@code workload}; @return whether the mount was accepted. */
    private static boolean mountAndRun(XfsFixture fx, Workload workload) throws IOException {
        try {
            fx.mount();
        } catch (IomapException e) {
            assertThat(e.getMessage()).doesNotContain("\n");
            return false;
        }
        try {
            workload.run(fx);
        } catch (IOException e) {
            assertThat(e.getMessage()).doesNotContain("\n");
        } finally {
            try {
                fx.fs.close();
            } catch (IOException e) {
                assertThat(e.getMessage()).doesNotContain("\n");
            }
            fx.fs = null;
        }
        return true;
    }

    @FunctionalInterface
    private interface Workload {
        void run(XfsFixture fx) throws IOException;
    }

    private static void assertVictimIntact(XfsFixture fx, Extent victim) throws IOException {
        assertThat(Arrays.equals(deviceBytes(fx, victim), VICTIM)).as("the victim's blocks on the device are intact")
                .isTrue();
    }

    private static void assertNotClean(XfsFixture fx) throws IOException {
        FsckReport report = IomapFileSystems.fsck("xfs-like", fx.device);
        assertThat(report.isClean()).as("fsck of the forged image: " + report.problems()).isFalse();
    }

    private static void rewriteInodeTableBlock(XfsFixture fx, ImageLoader.Image image, long ino) throws IOException {
        XfsGeometry geometry = Images.geometry(fx.device);
        long tableIndex = ino / geometry.inodesPerBlock();
        MetadataBlock.write(fx.device, geometry.inodeTableStart() + tableIndex, XfsLayout.INODE_TABLE,
                InodeCodec.encodeTableBlock(geometry, tableIndex, image.initialisedTableBlocks, image.inodes::get));
        fx.device.flush();
    }

    @Test
    void aForgedExtentIntoAnotherFilesBlockIsNeverWrittenThrough() throws Exception {
        try (XfsFixture fx = image()) {
            Extent victim = victimExtent(fx);
            ImageLoader.Image image = Images.load(fx.device);
            InodeState other = image.inodes.get(3L);
            Extent own = other.data.extents().getFirst();
            other.data.replace(new Extent(own.fileBlock(), own.length(), victim.deviceBlock() + 1, own.state(),
                    own.shared()));
            rewriteInodeTableBlock(fx, image, 3);

            boolean mounted = mountAndRun(fx, f -> {
                try (IomapFile file = f.fs.open("/other")) {
                    XfsFixture.writeAt(file, 0, pattern(9, 0, XfsFixture.BLOCK));
                    file.fsync();
                }
            });

            assertVictimIntact(fx, victim);
            assertNotClean(fx);
            assertThat(mounted).as("mount of an image whose extents overlap").isFalse();
        }
    }

    @Test
    void aForgedFreeLeafNeverHandsOutAnotherFilesBlock() throws Exception {
        try (XfsFixture fx = image()) {
            Extent victim = victimExtent(fx);
            ImageLoader.Image image = Images.load(fx.device);
            XfsGeometry geometry = Images.geometry(fx.device);
            AllocationGroup group = image.groups[geometry.agOf(victim.deviceBlock())];
            group.onDisk().free(victim.deviceBlock(), victim.length());
            Images.writeGroup(fx.device, geometry, group);

            boolean mounted = mountAndRun(fx, f -> {
                for (int i = 0; i < 8; i++) {
                    try (IomapFile file = f.write("/new" + i, pattern(20 + i, 0, 4 * XfsFixture.BLOCK))) {
                        file.fsync();
                    }
                }
            });

            assertVictimIntact(fx, victim);
            assertNotClean(fx);
            assertThat(mounted).as("mount of an image whose free space holds a file's blocks").isFalse();
        }
    }

    @Test
    void aDanglingNameNeverGivesItsInodeToANewFile() throws Exception {
        try (XfsFixture fx = image()) {
            Extent victim = victimExtent(fx);
            ImageLoader.Image image = Images.load(fx.device);
            InodeState other = image.inodes.remove(3L);
            XfsGeometry geometry = Images.geometry(fx.device);
            for (Extent extent : other.data.extents()) {
                AllocationGroup group = image.groups[geometry.agOf(extent.deviceBlock())];
                group.onDisk().free(extent.deviceBlock(), extent.length());
                Images.writeGroup(fx.device, geometry, group);
            }
            rewriteInodeTableBlock(fx, image, 3);

            List<Long> newInodes = new ArrayList<>();
            boolean mounted = mountAndRun(fx, f -> {
                try (IomapFile file = f.write("/new", pattern(30, 0, XfsFixture.BLOCK))) {
                    file.fsync();
                }
                newInodes.add(f.fs.stat("/new").ino());
            });

            assertThat(newInodes).doesNotContain(3L);
            assertVictimIntact(fx, victim);
            assertNotClean(fx);
            assertThat(mounted).as("mount of an image with a name pointing at a free inode").isFalse();
        }
    }
}
