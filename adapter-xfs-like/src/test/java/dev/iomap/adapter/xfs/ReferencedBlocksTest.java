package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.Extent;
import dev.iomap.api.FileType;
import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.XattrMode;
import dev.iomap.core.CachedInode;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * The check of each allocation against the blocks inodes reference asks {@link ReferencedBlocks} first
 * and walks the inodes only for blocks it holds, so every way a block comes to be referenced must be in
 * it: each test below forges one block of one kind of reference free in memory, asks the allocator for
 * it, and expects the shutdown that names the holder, as the walk over every inode found it before. (A
 * shut-down mount is dropped, not unmounted: unmount refuses it.)
 */
class ReferencedBlocksTest {
    /** Pretends the free space holds {@code block}, then allocates there: the volume must shut down. */
    private static void assertHandingOutShutsDown(DirectMount dm, long block, String holder) throws IOException {
        XfsVolume volume = dm.mount.volume();
        AllocationGroup group = volume.allocator.group(volume.geometry.agOf(block));
        group.onDisk().free(block, 1);
        group.available().free(block, 1);
        volume.metaLock.lock();
        try {
            assertThatThrownBy(() -> volume.allocate(1, block))
                    .isInstanceOf(FileSystemShutdownException.class)
                    .hasMessageContaining("handed out blocks").hasMessageContaining(holder);
        } finally {
            volume.metaLock.unlock();
        }
        assertThat(volume.isShutDown()).isTrue();
        dm.cache.close();
        dm.mount = null;
    }

    private static long firstDataBlock(DirectMount dm, long ino) {
        Extent extent = dm.mount.volume().inodes.get(ino).data.extents().getFirst();
        return extent.deviceBlock();
    }

    @Test
    void aFileWrittenInThisMount() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode file = dm.create("f");
            DirectMount.write(file, 0, pattern(1, 0, 2 * DirectMount.BLOCK));
            dm.fsync(file);
            assertHandingOutShutsDown(dm, firstDataBlock(dm, file.ino()), "inode " + file.ino() + " data fork");
        }
    }

    @Test
    void aFileLoadedAtMount() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode file = dm.create("f");
            DirectMount.write(file, 0, pattern(2, 0, 2 * DirectMount.BLOCK));
            dm.fsync(file);
            long ino = file.ino();
            dm.unmount();
            dm.mount();
            assertHandingOutShutsDown(dm, firstDataBlock(dm, ino), "inode " + ino + " data fork");
        }
    }

    @Test
    void aSymbolicLinksTargetChain() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            long ino = dm.mount.symlink(dm.mount.rootIno(), "s", "t".repeat(3000).getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    NewInodeAttributes.defaults(FileType.SYMLINK));
            InodeState link = dm.mount.volume().inodes.get(ino);
            assertThat(link.targetBlocks).as("a target this long is kept in blocks").isNotEmpty();
            assertHandingOutShutsDown(dm, link.targetBlocks.getFirst(), "symlink or extended-attribute block of inode "
                    + ino);
        }
    }

    @Test
    void anExtendedAttributeChain() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode file = dm.create("f");
            dm.mount.setxattr(file.ino(), "user.big", pattern(3, 0, 3000), XattrMode.CREATE);
            InodeState inode = dm.mount.volume().inodes.get(file.ino());
            assertThat(inode.xattrBlocks).as("an attribute this big is kept in blocks").isNotEmpty();
            assertHandingOutShutsDown(dm, inode.xattrBlocks.getFirst(), "symlink or extended-attribute block of inode "
                    + file.ino());
        }
    }

    @Test
    void anExtentListBlock() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode file = dm.create("f");
            for (int i = 0; i < 64; i++) {
                DirectMount.write(file, 2L * i * DirectMount.BLOCK, pattern(4 + i, 0, DirectMount.BLOCK));
            }
            dm.fsync(file);
            dm.mount.sync();
            InodeState inode = dm.mount.volume().inodes.get(file.ino());
            assertThat(inode.listBlocks).as("64 extents do not fit the slot").isNotEmpty();
            assertHandingOutShutsDown(dm, inode.listBlocks.getFirst(), "the extent list of inode " + file.ino());
        }
    }

    @Test
    void aClonedExtentWhoseSourceIsGone() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode source = dm.create("a");
            DirectMount.write(source, 0, pattern(5, 0, 2 * DirectMount.BLOCK));
            dm.fsync(source);
            CachedInode target = dm.create("b");
            dm.mount.cloneRange(source, 0, target, 0, 2L * DirectMount.BLOCK);
            long block = firstDataBlock(dm, source.ino());
            dm.mount.unlink(dm.mount.rootIno(), "a");
            dm.mount.evict(source.ino());
            assertThat(dm.mount.volume().inodes).doesNotContainKey(source.ino());
            assertHandingOutShutsDown(dm, block, "inode " + target.ino() + " data fork");
        }
    }

    @Test
    void runsMergeSplitAndAnswerOverlaps() {
        ReferencedBlocks blocks = new ReferencedBlocks();
        blocks.add(10, 5);
        blocks.add(15, 5);
        blocks.add(30, 10);
        assertThat(blocks.runCount()).as("[10,20) merged, [30,40)").isEqualTo(2);
        blocks.add(18, 14);
        assertThat(blocks.runCount()).as("[10,40) once the gap is filled").isEqualTo(1);
        blocks.remove(20, 5);
        assertThat(blocks.runCount()).as("[10,20) and [25,40)").isEqualTo(2);
        assertThat(blocks.intersects(20, 25)).isFalse();
        assertThat(blocks.intersects(19, 20)).isTrue();
        assertThat(blocks.intersects(24, 26)).isTrue();
        assertThat(blocks.intersects(0, 10)).isFalse();
        assertThat(blocks.intersects(40, 50)).isFalse();
        blocks.remove(0, 100);
        assertThat(blocks.runCount()).isZero();
        assertThat(blocks.intersects(0, 100)).isFalse();
    }

    @Test
    void aRemovalAcrossSeveralRunsKeepsTheirOuterEnds() {
        ReferencedBlocks blocks = new ReferencedBlocks();
        blocks.add(0, 10);
        blocks.add(20, 10);
        blocks.add(40, 10);
        blocks.remove(5, 40);
        assertThat(blocks.intersects(0, 5)).isTrue();
        assertThat(blocks.intersects(5, 45)).isFalse();
        assertThat(blocks.intersects(45, 50)).isTrue();
        assertThat(blocks.runCount()).isEqualTo(2);
    }
}
