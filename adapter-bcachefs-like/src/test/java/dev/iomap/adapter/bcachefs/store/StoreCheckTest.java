package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** StoreCheck on structures that are checksummed correctly but wrong. */
class StoreCheckTest {

    private record Fixture(RamBlockDevice device, BlockRange data) {
    }

    private static Fixture populated() throws IOException {
        RamBlockDevice device = StoreBasicsTest.formatted(1024, 4L << 20);
        BlockRange data;
        try (BtreeStore store = BtreeStore.open(device, false)) {
            store.space().reserve(8);
            data = store.space().allocate(8, -1);
            store.update().addRefs(data, 1).commit();
            for (int i = 0; i < 1500; i++) {
                store.update().put(StoreBasicsTest.key(i), StoreBasicsTest.value(i)).commit();
            }
        }
        assertEquals(List.of(), StoreCheck.check(device));
        assertEquals(List.of(new RefRun(data, 1)), StoreCheck.refCounts(device));
        return new Fixture(device, data);
    }

    /** @return the lowest internal node of the rightmost path */
    private static Node bottomInternal(RamBlockDevice device) throws IOException {
        BcachefsSuperblock sb = BtreeStore.readSuperblock(device);
        Node node = Node.decode(BlockIo.read(device, sb.rootBlock(), 1), sb.rootBlock(), sb.rootLevel());
        while (node.level > 1) {
            long child = node.childBlocks.getLast();
            node = Node.decode(BlockIo.read(device, child, 1), child, node.level - 1);
        }
        return node;
    }

    private static void rewrite(RamBlockDevice device, Node node) throws IOException {
        BlockIo.write(device, node.block, node.encode(1024, 99), IoPurpose.METADATA);
    }

    @Test
    void aKeyOutsideItsParentsRangeIsReported() throws IOException {
        RamBlockDevice device = populated().device();
        Node parent = bottomInternal(device);
        long leafBlock = parent.childBlocks.getLast();
        Node leaf = Node.decode(BlockIo.read(device, leafBlock, 1), leafBlock, 0);
        BKey below = new BKey(1, 0, 0);
        leaf.insertLeaf(0, below, new byte[] {1});
        rewrite(device, leaf);
        List<String> problems = StoreCheck.check(device);
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).startsWith("B-tree node at block " + leafBlock + " (level 0, from block "
                + parent.block + " entry " + (parent.size() - 1) + "): key 0 " + below + " is outside the node's range"),
                problems.get(0));
        assertTrue(problems.get(1).contains("is not above"), problems.get(1));
    }

    @Test
    void aNodeBlockUsedTwiceIsReportedAndNotFollowedTwice() throws IOException {
        RamBlockDevice device = populated().device();
        Node parent = bottomInternal(device);
        long twice = parent.childBlocks.getFirst();
        long lost = parent.childBlocks.getLast();
        parent.childBlocks.set(parent.size() - 1, twice);
        rewrite(device, parent);
        List<String> problems = StoreCheck.check(device);
        assertTrue(problems.getFirst().startsWith("B-tree node at block " + twice + " (level 0, from block "
                + parent.block + " entry " + (parent.size() - 1) + "): block already used by B-tree node at block "
                + twice), problems.toString());
        assertTrue(problems.stream().noneMatch(p -> p.contains("block " + lost + " ")), problems.toString());
    }

    @Test
    void aNodeInsideReferencedDataIsReported() throws IOException {
        Fixture fixture = populated();
        RamBlockDevice device = fixture.device();
        Node parent = bottomInternal(device);
        long leafBlock = parent.childBlocks.getLast();
        Node leaf = Node.decode(BlockIo.read(device, leafBlock, 1), leafBlock, 0);
        long target = fixture.data().start() + 3;
        leaf.block = target;
        BlockIo.write(device, target, leaf.encode(1024, 99), IoPurpose.METADATA);
        parent.childBlocks.set(parent.size() - 1, target);
        rewrite(device, parent);
        List<String> problems = StoreCheck.check(device);
        assertEquals(List.of("B-tree node at block " + target + " (level 0, from block " + parent.block + " entry "
                + (parent.size() - 1) + "): block is also referenced data, run " + new RefRun(fixture.data(), 1)),
                problems);
    }

    @Test
    void aNodePointerIntoTheJournalIsReported() throws IOException {
        RamBlockDevice device = populated().device();
        BcachefsSuperblock sb = BtreeStore.readSuperblock(device);
        Node parent = bottomInternal(device);
        parent.childBlocks.set(0, sb.journalStart() + 5);
        rewrite(device, parent);
        List<String> problems = StoreCheck.check(device);
        assertEquals(List.of("B-tree node at block " + (sb.journalStart() + 5) + " (level 0, from block " + parent.block
                + " entry 0): outside the node and data region [" + sb.dataStart() + ", " + sb.totalBlocks() + ")"),
                problems);
    }
}
