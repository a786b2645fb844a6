package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What mkfs leaves unwritten and how it becomes written: the group headers' leaf bitmaps and the inode
 * table's count of initialised blocks. Devices are poisoned first, so a block never written is told
 * apart from one written with zeroes.
 */
class LazyMetadataTest {
    private static final int BLOCK = 4096;
    private static final long BYTES = 64L << 20;

    private static RamBlockDevice poisonedDevice() throws Exception {
        RamBlockDevice device = new RamBlockDevice(BLOCK, BYTES);
        byte[] poison = new byte[1 << 20];
        java.util.Arrays.fill(poison, XfsFixture.POISON);
        for (long offset = 0; offset < BYTES; offset += poison.length) {
            device.poke(offset, poison, 0, poison.length);
        }
        return device;
    }

    private static RamBlockDevice formatted() throws Exception {
        RamBlockDevice device = poisonedDevice();
        IomapFileSystems.format("xfs-like", device, FormatOptions.blockSize(BLOCK));
        return device;
    }

    private static boolean neverWritten(RamBlockDevice device, long block) throws Exception {
        for (byte b : device.peek(block * BLOCK, BLOCK)) {
            if (b != XfsFixture.POISON) {
                return false;
            }
        }
        return true;
    }

    /** @return the leaf bitmap of a group header as it is on the device */
    private static BitSet bitmap(RamBlockDevice device, XfsGeometry geometry, int agno) throws Exception {
        ByteBuffer payload = MetadataBlock.read(device, geometry.agStart(agno), XfsLayout.AG_HEADER).payload();
        byte[] bits = new byte[payload.remaining() - XfsGeometry.AG_HEADER_FIXED_BYTES];
        payload.get(XfsGeometry.AG_HEADER_FIXED_BYTES, bits);
        return BitSet.valueOf(bits);
    }

    /** Rewrites a group header with one bit of its leaf bitmap flipped, keeping the checksum valid. */
    private static void flipBitmapBit(RamBlockDevice device, XfsGeometry geometry, int agno, int bit) throws Exception {
        long block = geometry.agStart(agno);
        ByteBuffer payload = MetadataBlock.read(device, block, XfsLayout.AG_HEADER).payload();
        ByteBuffer copy = ByteBuffer.allocate(payload.remaining()).order(payload.order());
        copy.put(payload.duplicate()).flip();
        int at = XfsGeometry.AG_HEADER_FIXED_BYTES + bit / 8;
        copy.put(at, (byte) (copy.get(at) ^ (1 << (bit % 8))));
        MetadataBlock.write(device, block, XfsLayout.AG_HEADER, copy);
    }

    private static BitSet bits(int... set) {
        BitSet bits = new BitSet();
        for (int bit : set) {
            bits.set(bit);
        }
        return bits;
    }

    @Test
    void mkfsWritesTheSuperblocksTheFirstInodeBlockAndEachGroupsHeaderAndFirstLeafOnly() throws Exception {
        try (RamBlockDevice device = poisonedDevice()) {
            IomapFileSystems.format("xfs-like", device, FormatOptions.blockSize(BLOCK));
            XfsGeometry geometry = Images.geometry(device);
            assertThat(geometry.agCount()).isEqualTo(4);
            assertThat(device.stats().bytesWritten()).isEqualTo((3 + 2 * 4) * BLOCK);
            assertThat(device.stats().writes()).isEqualTo(3 + 4);
            assertThat(neverWritten(device, geometry.journalStart() + 1)).isTrue();
            assertThat(neverWritten(device, geometry.inodeTableStart() + 1)).isTrue();
            for (int agno = 0; agno < 4; agno++) {
                assertThat(bitmap(device, geometry, agno)).isEqualTo(bits(0));
                assertThat(neverWritten(device, geometry.freeLeafBlock(agno, 1))).isTrue();
                assertThat(neverWritten(device, geometry.refcountLeafBlock(agno, 0))).isTrue();
            }
            assertThat(Images.load(device).initialisedTableBlocks).isEqualTo(1);
            XfsFixture.assertClean(device);
        }
    }

    @Test
    void inodeTableBlocksAreWrittenWhenTheFirstInodeOfThemIsCreated() throws Exception {
        try (RamBlockDevice device = formatted()) {
            XfsGeometry geometry = Images.geometry(device);
            int perBlock = geometry.inodesPerBlock();
            assertThat(perBlock).isEqualTo(13);
            try (IomapFileSystem fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions())) {
                for (int i = 2; i < perBlock; i++) {
                    fs.create("/f" + i).close();
                }
                fs.sync();
                assertThat(neverWritten(device, geometry.inodeTableStart() + 1)).isTrue();
                try (IomapFile file = fs.create("/f" + perBlock)) {
                    XfsFixture.writeAt(file, 0, pattern(perBlock, 0, 5000));
                }
            }
            XfsFixture.assertClean(device);
            assertThat(Images.load(device).initialisedTableBlocks).isEqualTo(2);
            assertThat(Images.load(device).inodes).containsKey((long) perBlock).hasSize(perBlock);
            assertThat(neverWritten(device, geometry.inodeTableStart() + 1)).isFalse();
            assertThat(neverWritten(device, geometry.inodeTableStart() + 2)).isTrue();
            try (IomapFileSystem fs = IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions())) {
                assertThat(XfsFixture.readFile(fs, "/f" + perBlock)).isEqualTo(pattern(perBlock, 0, 5000));
                assertThat(fs.readdir("/")).hasSize(perBlock - 1);
            }
            XfsFixture.assertClean(device);
        }
    }

    @Test
    void inodeTableBlocksPastTheCountAreNeverReadAndACountPastWhatWasWrittenIsFound() throws Exception {
        try (RamBlockDevice device = formatted()) {
            XfsGeometry geometry = Images.geometry(device);
            long stale = geometry.inodeTableStart() + 3;
            ImageLoader.Image image = Images.load(device);
            // Garbage with a valid checksum, as a filesystem formatted earlier on the device leaves.
            image.inodes.get(XfsGeometry.ROOT_INO).nlink = 7;
            MetadataBlock.write(device, stale, XfsLayout.INODE_TABLE,
                    InodeCodec.encodeTableBlock(geometry, 0, 1, image.inodes::get));
            XfsFixture.assertClean(device);
            image.inodes.get(XfsGeometry.ROOT_INO).nlink = 2;
            MetadataBlock.write(device, geometry.inodeTableStart(), XfsLayout.INODE_TABLE,
                    InodeCodec.encodeTableBlock(geometry, 0, 3, image.inodes::get));
            assertThat(IomapFileSystems.fsck("xfs-like", device).problems()).containsExactly(
                    "inode table: metadata block " + (stale - 2) + " (device offset " + (stale - 2) * BLOCK
                            + "): expected a 0x4f4e4958 \"XINO\" block, found magic 0xd5d5d5d5",
                    "inode table: metadata block " + (stale - 1) + " (device offset " + (stale - 1) * BLOCK
                            + "): expected a 0x4f4e4958 \"XINO\" block, found magic 0xd5d5d5d5");
            assertThatThrownBy(() -> IomapFileSystems.mount("xfs-like", device, XfsFixture.mountOptions()))
                    .isInstanceOf(CorruptFileSystemException.class)
                    .hasMessageContaining("metadata block " + (stale - 2));
        }
    }

    @Test
    void theLeafBitmapMarksExactlyTheLeavesHoldingRecordsAndRoundTrips() throws Exception {
        try (RamBlockDevice device = formatted()) {
            XfsGeometry geometry = Images.geometry(device);
            AllocationGroup group = Images.load(device).groups[1];
            long data = geometry.agDataStart(1);
            long freeSpan = geometry.freeLeafSpan();
            long refcountSpan = geometry.refcountLeafSpan();
            // Free space left starting in free-space leaves 0, 2 and 5.
            group.allocateOnDisk(data + 10, 2 * freeSpan - 10);
            group.allocateOnDisk(data + 2 * freeSpan + 20, 3 * freeSpan - 20 + 7);
            // Shared blocks starting in reference-count leaves 1 and 7.
            group.incrementRefcount(data + refcountSpan + 3, 4);
            group.incrementRefcount(data + 7 * refcountSpan, 2);
            group.incrementRefcount(data + 7 * refcountSpan + 1, 1);
            List<BlockRange> free = group.onDisk().freeExtents();
            assertThat(free).containsExactly(new BlockRange(data, 10),
                    new BlockRange(data + 2 * freeSpan, 20),
                    new BlockRange(data + 5 * freeSpan + 7, geometry.agLength(1) - geometry.agHeaderBlocks(1)
                            - 5 * freeSpan - 7));
            Images.writeGroup(device, geometry, group);

            int refcountBase = geometry.freeLeaves(1);
            assertThat(bitmap(device, geometry, 1)).isEqualTo(bits(0, 2, 5, refcountBase + 1, refcountBase + 7));
            AllocationGroup loaded = new ImageLoader(device, geometry, false).load().groups[1];
            assertThat(loaded.onDisk().freeExtents()).isEqualTo(free);
            assertThat(loaded.refcounts().records()).containsExactly(
                    new RefcountMap.Record(data + refcountSpan + 3, 4, 2),
                    new RefcountMap.Record(data + 7 * refcountSpan, 1, 2),
                    new RefcountMap.Record(data + 7 * refcountSpan + 1, 1, 3));
        }
    }

    @Test
    void aCommitWritesTheHeaderAndOnlyTheLeavesItsChangesTouched() throws Exception {
        try (RamBlockDevice device = formatted()) {
            XfsGeometry geometry = Images.geometry(device);
            AllocationGroup group = Images.load(device).groups[2];
            long data = geometry.agDataStart(2);
            long span = geometry.freeLeafSpan();
            long header = geometry.agStart(2);
            assertThat(group.encodeChanged().keySet()).containsExactly(header);

            group.allocateOnDisk(data + 3 * span + 5, 1);
            assertThat(group.encodeChanged().keySet()).containsExactly(header, geometry.freeLeafBlock(2, 0),
                    geometry.freeLeafBlock(2, 3));
            group.clearChanged();
            assertThat(group.encodeChanged().keySet()).containsExactly(header);

            // Emptying leaf 0: nothing starts there any more, so it is not written and its bit is cleared.
            // Leaf 3 holds where the change ends (a record starting there could have changed): rewritten.
            group.allocateOnDisk(data, 3 * span + 5);
            var payloads = group.encodeChanged();
            assertThat(payloads.keySet()).containsExactly(header, geometry.freeLeafBlock(2, 3));
            ByteBuffer bitmap = payloads.get(header).position(XfsGeometry.AG_HEADER_FIXED_BYTES);
            byte[] bits = new byte[bitmap.remaining()];
            bitmap.get(bits);
            assertThat(BitSet.valueOf(bits)).isEqualTo(bits(3));

            group.clearChanged();
            group.freeOnDisk(data + 2 * span, 1);
            assertThat(group.encodeChanged().keySet()).containsExactly(header, geometry.freeLeafBlock(2, 2));
        }
    }

    @Test
    void aWrongBitInALeafBitmapIsFoundByFsckAndRefusedByMount() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.write("/f", pattern(1, 0, 100_000)).close();
            fx.unmountAndCheck();
            RamBlockDevice device = (RamBlockDevice) fx.device;
            XfsGeometry geometry = Images.geometry(device);
            // Group 3 holds nothing: its free space is one extent, in free-space leaf 0.
            long data = geometry.agDataStart(3);
            long free = geometry.agLength(3) - geometry.agHeaderBlocks(3);
            assertThat(Images.load(device).groups[3].onDisk().freeExtents()).containsExactly(new BlockRange(data, free));
            String where = "allocation group 3 header at " + XfsLayout.where(geometry.agStart(3), BLOCK);

            flipBitmapBit(device, geometry, 3, 0);
            assertThat(IomapFileSystems.fsck("xfs-like", device).problems()).containsExactly(
                    where + ": counts " + free + " free blocks in 1 extents and 0 refcount records, leaves hold 0 in 0"
                            + " and 0",
                    "blocks [" + data + ", +" + free + ") (device offset " + data * BLOCK
                            + ") are neither free nor used: leaked");
            assertThatThrownBy(fx::mount).isInstanceOf(CorruptFileSystemException.class).hasMessageContaining(where);
            flipBitmapBit(device, geometry, 3, 0);

            flipBitmapBit(device, geometry, 3, 1);
            long unused = geometry.freeLeafBlock(3, 1);
            String unreadable = "metadata block " + unused + " (device offset " + unused * BLOCK
                    + "): expected a 0x4f4e4258 \"XBNO\" block, found magic 0x00000000";
            assertThat(IomapFileSystems.fsck("xfs-like", device).problems()).containsExactly(unreadable);
            assertThatThrownBy(fx::mount).isInstanceOf(CorruptFileSystemException.class).hasMessage(unreadable);
            flipBitmapBit(device, geometry, 3, 1);

            int pastTheLeaves = geometry.leaves(3);
            flipBitmapBit(device, geometry, 3, pastTheLeaves);
            assertThat(IomapFileSystems.fsck("xfs-like", device).problems()).containsExactly(where
                    + ": the leaf bitmap marks leaf bit " + pastTheLeaves + " in use; the group has " + pastTheLeaves
                    + " leaves", "blocks [" + data + ", +" + free + ") (device offset " + data * BLOCK
                    + ") are neither free nor used: leaked");
            flipBitmapBit(device, geometry, 3, pastTheLeaves);
            fx.mount();
            assertThat(fx.readFile("/f")).isEqualTo(pattern(1, 0, 100_000));
        }
    }
}
