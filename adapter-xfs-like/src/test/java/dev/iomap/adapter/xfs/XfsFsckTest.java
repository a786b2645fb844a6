package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystems;
import java.util.List;
import org.junit.jupiter.api.Test;

/** fsck finds inconsistencies that every block's checksum hides: each forged image below is well formed. */
class XfsFsckTest {

    /** An unmounted image with /a (3 blocks), /b (a clone of /a) and /c; the file inode numbers 2, 3, 4. */
    private static XfsFixture image() throws Exception {
        XfsFixture fx = XfsFixture.create();
        try (IomapFile a = fx.write("/a", pattern(1, 0, 10_000)); IomapFile b = fx.fs.create("/b")) {
            a.fsync();
            b.cloneRange(a, 0, 0, 10_000);
        }
        fx.write("/c", pattern(2, 0, 5000)).close();
        fx.unmountAndCheck();
        return fx;
    }

    private static FsckReport fsck(XfsFixture fx) throws Exception {
        return IomapFileSystems.fsck("xfs-like", fx.device);
    }

    private static Extent firstExtent(ImageLoader.Image image, long ino) {
        return image.inodes.get(ino).data.extents().getFirst();
    }

    @Test
    void blocksBothFreeAndUsed() throws Exception {
        try (XfsFixture fx = image()) {
            ImageLoader.Image image = Images.load(fx.device);
            XfsGeometry geometry = Images.geometry(fx.device);
            Extent c = firstExtent(image, 4);
            AllocationGroup group = image.groups[geometry.agOf(c.deviceBlock())];
            group.onDisk().free(c.deviceBlock(), 1);
            Images.writeGroup(fx.device, geometry, group);
            assertThat(fsck(fx).problems()).anySatisfy(p -> assertThat(p)
                    .contains("blocks [" + c.deviceBlock() + ", +1)")
                    .contains("device offset " + c.deviceBlock() * 4096)
                    .contains("are free and also used by inode 4 data fork file block 0"));
            group.onDisk().allocateExact(c.deviceBlock(), 1);
            Images.writeGroup(fx.device, geometry, group);
            fx.mount();
        }
    }

    @Test
    void leakedBlocks() throws Exception {
        try (XfsFixture fx = image()) {
            ImageLoader.Image image = Images.load(fx.device);
            XfsGeometry geometry = Images.geometry(fx.device);
            AllocationGroup group = image.groups[1];
            BlockRange free = group.onDisk().freeExtents().getLast();
            group.onDisk().allocateExact(free.end() - 2, 2);
            Images.writeGroup(fx.device, geometry, group);
            assertThat(fsck(fx).problems()).containsExactly("blocks [" + (free.end() - 2) + ", +2) (device offset "
                    + (free.end() - 2) * 4096 + ") are neither free nor used: leaked");
            group.onDisk().free(free.end() - 2, 2);
            Images.writeGroup(fx.device, geometry, group);
            fx.mount();
        }
    }

    @Test
    void referenceCountsThatDoNotMatchTheOwners() throws Exception {
        try (XfsFixture fx = image()) {
            ImageLoader.Image image = Images.load(fx.device);
            XfsGeometry geometry = Images.geometry(fx.device);
            Extent c = firstExtent(image, 4);
            AllocationGroup group = image.groups[geometry.agOf(c.deviceBlock())];
            group.refcounts().increment(c.deviceBlock(), 1);
            Images.writeGroup(fx.device, geometry, group);
            List<String> problems = fsck(fx).problems();
            assertThat(problems).anySatisfy(p -> assertThat(p).contains("the refcount record says 2 owners, 1 "
                    + "data-fork extents own them: inode 4 data fork file block 0"));
            group.refcounts().decrement(c.deviceBlock(), 1);
            Images.writeGroup(fx.device, geometry, group);
            fx.mount();
        }
    }

    @Test
    void linkCountsAndDirectoryEntries() throws Exception {
        try (XfsFixture fx = image()) {
            ImageLoader.Image image = Images.load(fx.device);
            XfsGeometry geometry = Images.geometry(fx.device);
            image.inodes.get(2L).nlink = 5;
            InodeState orphan = new InodeState(9, dev.iomap.api.FileType.REGULAR);
            orphan.nlink = 1;
            image.inodes.put(9L, orphan);
            long tableIndex = 2 / geometry.inodesPerBlock();
            long block = geometry.inodeTableStart() + tableIndex;
            MetadataBlock.write(fx.device, block, XfsLayout.INODE_TABLE,
                    InodeCodec.encodeTableBlock(geometry, tableIndex, image.initialisedTableBlocks, image.inodes::get));
            assertThat(fsck(fx).problems()).containsExactlyInAnyOrder(
                    "inode 2 (inode table " + XfsLayout.where(block, 4096) + "): link count 5 but 1 names",
                    "inode 9 (inode table " + XfsLayout.where(block, 4096)
                            + ") is allocated but no directory names it (link count 1)");
            image.inodes.get(2L).nlink = 1;
            image.inodes.remove(9L);
            MetadataBlock.write(fx.device, block, XfsLayout.INODE_TABLE,
                    InodeCodec.encodeTableBlock(geometry, tableIndex, image.initialisedTableBlocks, image.inodes::get));
            fx.mount();
        }
    }

    /** Rewrites one 8-byte field of a metadata block's payload, keeping the checksum valid. */
    private static long forgeLong(XfsFixture fx, long block, int type, int payloadOffset, long value) throws Exception {
        java.nio.ByteBuffer payload = MetadataBlock.read(fx.device, block, type).payload();
        java.nio.ByteBuffer copy = java.nio.ByteBuffer.allocate(payload.remaining()).order(payload.order());
        copy.put(payload.duplicate()).flip();
        long old = copy.getLong(payloadOffset);
        copy.putLong(payloadOffset, value);
        MetadataBlock.write(fx.device, block, type, copy);
        fx.device.flush();
        return old;
    }

    @Test
    void aLongestFreeExtentTheLeavesDoNotHold() throws Exception {
        try (XfsFixture fx = image()) {
            XfsGeometry geometry = Images.geometry(fx.device);
            long header = geometry.agStart(1);
            long longest = forgeLong(fx, header, XfsLayout.AG_HEADER, 40, 3);
            String where = "allocation group 1 header at " + XfsLayout.where(header, 4096);
            assertThat(fsck(fx).problems()).anySatisfy(p -> assertThat(p).contains(where)
                    .contains("says the longest free extent is 3 blocks, the leaves' longest is " + longest));
            org.assertj.core.api.Assertions.assertThatThrownBy(fx::mount)
                    .isInstanceOf(dev.iomap.api.CorruptFileSystemException.class).hasMessageContaining(where);
            forgeLong(fx, header, XfsLayout.AG_HEADER, 40, longest);
            fx.mount();
        }
    }

    @Test
    void aDirectoryBlockOfAnotherOwner() throws Exception {
        try (XfsFixture fx = image()) {
            long block = firstExtent(Images.load(fx.device), XfsGeometry.ROOT_INO).deviceBlock();
            forgeLong(fx, block, XfsLayout.DIRECTORY, 0, 3);
            String where = "directory inode 1 block at " + XfsLayout.where(block, 4096);
            assertThat(fsck(fx).problems()).anySatisfy(p -> assertThat(p).startsWith(where)
                    .contains("directory block of inode 3 index 0").contains("expected inode 1"));
            org.assertj.core.api.Assertions.assertThatThrownBy(fx::mount)
                    .isInstanceOf(dev.iomap.api.CorruptFileSystemException.class).hasMessageStartingWith(where);
            forgeLong(fx, block, XfsLayout.DIRECTORY, 0, XfsGeometry.ROOT_INO);
            fx.mount();
        }
    }

    @Test
    void aCleanImageReportsWhatWasChecked() throws Exception {
        try (XfsFixture fx = image()) {
            FsckReport report = fsck(fx);
            assertThat(report.isClean()).isTrue();
            assertThat(report.checked()).isEqualTo("4 inodes, 4 extents, 16384 blocks in 4 allocation groups");
            fx.mount();
        }
    }
}
